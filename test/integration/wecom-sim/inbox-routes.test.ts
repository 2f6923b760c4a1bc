import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRICT_CSP } from '#lib/web/serve.js';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import type { JsonBody } from '#test/helpers/gateway.js';
import { APP, getToken, send, startTestSimulator, textMessage } from '#test/helpers/sim-fixtures.js';

/** The JSON the inbox page reads, and the page itself. */
let sim: WecomSimulator;
let token: string;

beforeAll(async () => {
  sim = await startTestSimulator({
    limits: { perMemberPerMinute: 1 },
    directory: { users: ['alice', 'bob', 'zoe'], apps: { [APP.agentId]: { users: ['alice', 'bob'] } } },
  });
  token = await getToken(sim);
});
afterAll(() => sim?.stop());

const getJson = async (path: string): Promise<JsonBody> => (await fetch(`${sim.url}/__sim/${path}`)).json();

describe('GET /__sim/members and /__sim/timeline/<userid>', () => {
  it('lists the directory, then whoever else received something, and each timeline newest first', async () => {
    const first = await send(sim, token, textMessage({ touser: 'alice', enable_duplicate_check: 1 }));
    await send(sim, token, textMessage({ touser: 'alice', enable_duplicate_check: 1 }));
    await send(sim, token, textMessage({ touser: 'alice|zoe', text: { content: 'second' } }));

    expect(await getJson('members')).toEqual([
      { userid: 'alice', inDirectory: true, messages: 1, lastAt: expect.any(Number) },
      { userid: 'bob', inDirectory: true, messages: 0, lastAt: null },
      { userid: 'zoe', inDirectory: true, messages: 0, lastAt: null },
    ]);
    // Userids fold to lower case, as in WeCom.
    const alice = await getJson('timeline/ALICE');
    expect(alice.userid).toBe('alice');
    expect(alice.items.map((i: { kind: string }) => i.kind)).toEqual(['drop', 'duplicate', 'message']);
    expect(alice.items[1].duplicate.msgid).toBe(first.msgid);
    const zoe = await getJson('timeline/zoe');
    expect(zoe.items).toEqual([
      {
        kind: 'undelivered',
        at: expect.any(Number),
        undelivered: expect.objectContaining({ userId: 'zoe', reason: 'invaliduser', msgtype: 'text' }),
      },
    ]);
  });
});

describe('GET /__sim/stream', () => {
  it('announces a change when a message is sent', async () => {
    const controller = new AbortController();
    const res = await fetch(`${sim.url}/__sim/stream`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let seen = '';
    const read = async (pattern: RegExp) => {
      while (!pattern.test(seen)) seen += decoder.decode((await reader.read()).value);
    };
    await read(/event: change\ndata: \{"version":(\d+)\}/);
    const before = Number(/"version":(\d+)/.exec(seen)?.[1]);
    await send(sim, token, textMessage({ touser: 'bob' }));
    await read(new RegExp(`"version":${before + 1}`));
    controller.abort();
  });
});

describe('GET /__sim/ui', () => {
  it('serves the page for the app routes under the strict CSP, and its hashed assets', async () => {
    for (const path of ['/__sim/ui', '/__sim/ui/alice', '/__sim/ui/alice/latest']) {
      const res = await fetch(`${sim.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(STRICT_CSP);
      expect(await res.text()).toMatch(/<script type="module" src="\/__sim\/ui\/assets\/main-\w+\.js">/);
    }
    expect(sim.inboxUrl).toBe(`${sim.url}/__sim/ui`);
    expect((await fetch(`${sim.url}/__sim/ui/assets/none-1.js`)).status).toBe(404);
  });
});
