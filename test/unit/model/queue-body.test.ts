import { describe, expect, it } from 'vitest';
import { decodeQueuedMessage, encodeQueuedMessage, newRecord, toQueuedMessage } from '#lib/model/index.js';

/**
 * Bodies exactly as the gateway wrote them before lib/model owned the format (commit b950a8c: `toQueuedMessage` +
 * `JSON.stringify`): messages already in the queues when a new version deploys must still be delivered.
 */
const FIRST_DELIVERY_BODY =
  '{"v":1,"id":"msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC","app":"ops","priority":"high","createdAt":"2026-11-30T08:00:00.000Z","expiresAt":1767081600,"apiKey":"ops-key","request":{"app":"ops","priority":"high","callbackUrl":"https://hooks.example.com/wecom","metadata":{"ticket":"OPS-1"},"recipients":{"touser":["zhangsan","lisi"],"toparty":[],"totag":[]},"msgtype":"text","content":{"content":"磁盘告警 disk 91%"},"options":{"safe":0}},"generation":0}';
const DEFERRED_COPY_BODY =
  '{"v":1,"id":"msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC","app":"ops","priority":"high","createdAt":"2026-11-30T08:00:00.000Z","expiresAt":1767081600,"apiKey":"ops-key","request":{"app":"ops","priority":"high","callbackUrl":"https://hooks.example.com/wecom","metadata":{"ticket":"OPS-1"},"recipients":{"touser":["zhangsan","lisi"],"toparty":[],"totag":[]},"msgtype":"text","content":{"content":"磁盘告警 disk 91%"},"options":{"safe":0}},"generation":2,"mayHaveReachedWecom":true}';

describe('the SQS body', () => {
  it('decodes a body written by the previous version, field for field', () => {
    const m = decodeQueuedMessage(FIRST_DELIVERY_BODY);

    expect(m).toEqual({
      v: 1,
      id: 'msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC',
      app: 'ops',
      priority: 'high',
      createdAt: '2026-11-30T08:00:00.000Z',
      expiresAt: 1767081600,
      apiKey: 'ops-key',
      request: {
        app: 'ops',
        priority: 'high',
        callbackUrl: 'https://hooks.example.com/wecom',
        metadata: { ticket: 'OPS-1' },
        recipients: { touser: ['zhangsan', 'lisi'], toparty: [], totag: [] },
        msgtype: 'text',
        content: { content: '磁盘告警 disk 91%' },
        options: { safe: 0 },
      },
      generation: 0,
    });
    expect(decodeQueuedMessage(DEFERRED_COPY_BODY)).toMatchObject({
      generation: 2,
      mayHaveReachedWecom: true,
    });
  });

  it('encodes a freshly stored record to the very bytes the previous version wrote', () => {
    const old = decodeQueuedMessage(FIRST_DELIVERY_BODY);
    if (!old) throw new Error('fixture does not decode');
    const record = newRecord(old);

    expect(encodeQueuedMessage(toQueuedMessage(record))).toBe(FIRST_DELIVERY_BODY);
    expect(
      encodeQueuedMessage({ ...toQueuedMessage(record), generation: 2, mayHaveReachedWecom: true }),
    ).toBe(DEFERRED_COPY_BODY);
  });

  it.each([
    ['another version', FIRST_DELIVERY_BODY.replace('"v":1', '"v":2')],
    ['no version', FIRST_DELIVERY_BODY.replace('"v":1,', '')],
    ['no id', FIRST_DELIVERY_BODY.replace('"id":"msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC",', '')],
    ['no request', '{"v":1,"id":"msg_1","generation":0}'],
    ['not JSON', '{"v":1,'],
    ['JSON null', 'null'],
  ])('refuses a body with %s', (_, body) => {
    expect(decodeQueuedMessage(body)).toBeUndefined();
  });
});
