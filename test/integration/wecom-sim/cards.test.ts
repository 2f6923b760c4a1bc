import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallbackVerifier } from '#lib/callback/index.js';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import { APP, getToken, OTHER_APP, postApi, startTestSimulator } from '#test/helpers/sim-fixtures.js';
import { TEST_APP } from '#test/helpers/wecom-callback.js';

const CARD = {
  card_type: 'button_interaction',
  task_id: 'task-1',
  main_title: { title: 'Deploy v2?' },
  button_list: [
    { text: 'Approve', key: 'approve' },
    { text: 'Reject', key: 'reject', style: 2 },
  ],
};
const cardMessage = (touser = 'alice|bob') => ({
  touser,
  msgtype: 'template_card',
  agentid: APP.agentId,
  template_card: CARD,
});
const HOUR = 3_600_000;

/** A callback URL that verifies what it gets with the gateway's own verifier and keeps the events. */
async function startCallbackReceiver(status = 200) {
  const verifier = createCallbackVerifier({ ...TEST_APP, corpId: APP.corpId });
  const events: ReturnType<typeof verifier.receive>[] = [];
  let hits = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits++;
      const query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
      events.push(verifier.receive(query, Buffer.concat(chunks)));
      res.writeHead(status);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/wecom/callback/ops`,
    events,
    hits: () => hits,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('WeCom simulator › template cards', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeEach(async () => {
    sim = await startTestSimulator();
    token = await getToken(sim);
  });
  afterEach(() => sim.stop());

  const update = (responseCode: unknown, extra: Record<string, unknown> = {}, as = token) =>
    postApi(sim, 'update_template_card', as, {
      atall: 1,
      agentid: APP.agentId,
      response_code: responseCode,
      button: { replace_name: 'Approved by alice' },
      ...extra,
    });

  it('accepts the send answer response_code once, then answers 60140, and shows the new button text', async () => {
    const sent = await postApi(sim, 'send', token, cardMessage());

    const first = await update(sent.response_code);
    const second = await update(sent.response_code);

    expect([first.errcode, second.errcode]).toEqual([0, 60140]);
    expect(sim.inbox('alice')[0]?.updates).toEqual([
      { at: expect.any(Number), replaceName: 'Approved by alice' },
    ]);
    expect(sim.stats().cardUpdateCalls).toBe(2);
  });

  it('answers 60140 for an unknown code, 42015 for another app, 82102 for a user not on the card', async () => {
    const sent = await postApi(sim, 'send', token, cardMessage('alice'));
    const other = await getToken(sim, OTHER_APP);

    expect((await update('made-up')).errcode).toBe(60140);
    expect((await update(sent.response_code, { agentid: OTHER_APP.agentId }, other)).errcode).toBe(42015);
    expect((await update(sent.response_code, { atall: undefined, userids: ['mallory'] })).errcode).toBe(
      82102,
    );
    expect((await update(sent.response_code, { atall: undefined, userids: ['ALICE'] })).errcode).toBe(0);
  });

  it('replaces the whole card with a new one for the users named', async () => {
    const sent = await postApi(sim, 'send', token, cardMessage());
    const next = {
      card_type: 'text_notice',
      main_title: { title: 'Deployed' },
      card_action: { type: 1, url: 'https://x' },
    };

    const answer = await update(sent.response_code, {
      atall: undefined,
      userids: ['bob'],
      button: undefined,
      template_card: next,
    });

    expect(answer.errcode).toBe(0);
    expect(sim.inbox('bob')[0]?.payload).toEqual(next);
    expect(sim.inbox('alice')[0]?.payload).toEqual(CARD);
  });

  it.each([
    ['lenient', 71, 0],
    ['lenient', 73, 60140],
    ['strict', 23, 0],
    ['strict', 25, 60140],
  ] as const)('under the %s reading a code %i h old is answered %i', async (preset, hours, errcode) => {
    sim.setReadings(preset);
    const sent = await postApi(sim, 'send', token, cardMessage());
    sim.setClockOffset(hours * HOUR);

    expect((await update(sent.response_code, {}, await getToken(sim))).errcode).toBe(errcode);
  });

  describe('playing the user', () => {
    let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;
    beforeEach(async () => {
      receiver = await startCallbackReceiver();
      sim.setCallbackTargets([{ ...TEST_APP, corpId: APP.corpId, agentId: APP.agentId, url: receiver.url }]);
    });
    afterEach(() => receiver.close());

    it('posts a template_card_event with a fresh response_code that update_template_card accepts', async () => {
      await postApi(sim, 'send', token, cardMessage());

      const click = await sim.click({ userId: 'Bob', taskId: 'task-1', key: 'reject' });

      expect(click).toMatchObject({ status: 200, attempts: 1, eventKey: 'reject', taskId: 'task-1' });
      expect(receiver.events).toEqual([
        expect.objectContaining({
          kind: 'template_card_event',
          from: 'bob',
          taskId: 'task-1',
          eventKey: 'reject',
          cardType: 'button_interaction',
          responseCode: click.responseCode,
        }),
      ]);
      expect((await update(click.responseCode)).errcode).toBe(0);
    });

    it('refuses a click by someone who never got the card, or on a key the card lacks', async () => {
      await postApi(sim, 'send', token, cardMessage('alice'));

      await expect(sim.click({ userId: 'mallory', taskId: 'task-1' })).rejects.toThrow('did not receive');
      await expect(sim.click({ userId: 'alice', taskId: 'task-1', key: 'nope' })).rejects.toThrow(
        'no button key',
      );
      expect(receiver.hits()).toBe(0);
    });

    it('over HTTP: POST /__sim/reply posts a text message with a 64-bit MsgId', async () => {
      const res = await fetch(`${sim.url}/__sim/reply`, {
        method: 'POST',
        body: JSON.stringify({ userid: 'alice', content: '收到 ok' }),
      });

      const body = (await res.json()) as { status: number; msgId: string };
      expect(body.status).toBe(200);
      expect(receiver.events).toEqual([
        expect.objectContaining({ kind: 'text', from: 'alice', content: '收到 ok', msgId: body.msgId }),
      ]);
    });
  });

  it('retries a callback that is not answered 200, three times, as WeCom does', async () => {
    const failing = await startCallbackReceiver(503);
    sim.setCallbackTargets([{ ...TEST_APP, corpId: APP.corpId, agentId: APP.agentId, url: failing.url }]);

    const reply = await sim.reply({ userId: 'alice', content: 'hi' });

    expect(reply).toMatchObject({ status: 503, attempts: 4 });
    expect(failing.hits()).toBe(4);
    await failing.close();
  });
});
