import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestGateway, startIngestGateway } from '#test/helpers/ingest-gateway.js';
import { messageBody } from '#test/helpers/messages-factories.js';

describe('POST /v1/messages/{id}/recall on the WeCom simulator', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway();
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  const sendAndWait = async (touser: string, statuses: string[]) => {
    const accepted = await gw.post('/v1/messages', messageBody('text', { touser }));
    expect(accepted.status).toBe(202);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await gw.get(`/v1/messages/${accepted.body.id}`);
      if (statuses.includes(res.body.status)) return res.body;
      if (Date.now() > deadline) throw new Error(`never ${statuses}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('recalls a sent message: status recalled, and the member no longer sees it', async () => {
    const sent = await sendAndWait('recall-user', ['sent']);
    expect(sent.wecom).toEqual({
      msgid: expect.any(String),
      invaliduser: '',
      invalidparty: '',
      invalidtag: '',
      unlicenseduser: '',
    });

    const res = await gw.post(`/v1/messages/${sent.id}/recall`, undefined);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'recalled' });
    const after = await gw.get(`/v1/messages/${sent.id}`);
    expect(after.body.status).toBe('recalled');
    expect(after.body.events.map((e: { type: string }) => e.type)).toEqual(['queued', 'sent', 'recalled']);
    const inbox = gw.stack.simulator?.inbox('recall-user') ?? [];
    expect(inbox).toEqual([expect.objectContaining({ msgid: sent.wecom.msgid, recalled: true })]);
    expect(gw.stack.simulator?.stats().recallCalls).toBe(1);
  });

  it('answers 200 again for a message that is already recalled, without calling WeCom', async () => {
    const sent = await sendAndWait('recall-twice', ['sent']);
    await gw.post(`/v1/messages/${sent.id}/recall`, undefined);
    const calls = gw.stack.simulator?.stats().recallCalls;

    const again = await gw.post(`/v1/messages/${sent.id}/recall`, undefined);

    expect(again.status).toBe(200);
    expect(gw.stack.simulator?.stats().recallCalls).toBe(calls);
  });

  it('answers 409 not_recallable for a message that WeCom refused (failed)', async () => {
    gw.stack.simulator?.faults.script([{ errcode: 40003 }]);
    const failed = await sendAndWait('recall-failed', ['failed']);

    const res = await gw.post(`/v1/messages/${failed.id}/recall`, undefined);

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('not_recallable');
  });

  it('answers 409 when WeCom refuses the recall itself, and keeps the status sent', async () => {
    const sent = await sendAndWait('recall-refused', ['sent']);
    gw.stack.simulator?.faults.script([{ errcode: 42052 }], { path: 'recall' });

    const res = await gw.post(`/v1/messages/${sent.id}/recall`, undefined);

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('recall_window_passed');
    expect((await gw.get(`/v1/messages/${sent.id}`)).body.status).toBe('sent');
  });

  it('answers 503 when WeCom is busy, so the client retries', async () => {
    const sent = await sendAndWait('recall-busy', ['sent']);
    gw.stack.simulator?.faults.script([{ errcode: -1 }], { path: 'recall' });

    const res = await gw.post(`/v1/messages/${sent.id}/recall`, undefined);

    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect((await gw.post(`/v1/messages/${sent.id}/recall`, undefined)).status).toBe(200);
  });
});
