import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, text } from '#test/helpers/gateway.js';

describe('walking skeleton: POST /v1/messages → SQS → sender → WeCom simulator', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('delivers a text message to the member and reports it sent with the WeCom msgid', async () => {
    const accepted = await gw.post('/v1/messages', text('hello from the walking skeleton', 'zhangsan'));
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ id: expect.stringMatching(/^msg_[0-9A-Z]{26}$/), status: 'queued' });

    const status = await gw.waitForStatus(accepted.body.id, ['sent']);
    const inbox = gw.stack.simulator?.inbox('zhangsan') ?? [];
    expect(inbox).toHaveLength(1);
    expect(inbox[0]?.payload).toEqual({ content: 'hello from the walking skeleton' });
    expect(status.wecom.msgid).toBe(inbox[0]?.msgid);
    expect(status.attempts).toBe(1);
  });

  it('answers the health check without a key', async () => {
    const res = await fetch(`${gw.stack.apiUrl}/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
