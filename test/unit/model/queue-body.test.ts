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
/** A retry copy in doubt as the gateway writes it since the time was kept (14ed765: `mayHaveReachedAt` too). */
const IN_DOUBT_BODY =
  '{"v":1,"id":"msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC","app":"ops","priority":"high","createdAt":"2026-11-30T08:00:00.000Z","expiresAt":1767081600,"apiKey":"ops-key","request":{"app":"ops","priority":"high","callbackUrl":"https://hooks.example.com/wecom","metadata":{"ticket":"OPS-1"},"recipients":{"touser":["zhangsan","lisi"],"toparty":[],"totag":[]},"msgtype":"text","content":{"content":"磁盘告警 disk 91%"},"options":{"safe":0}},"generation":3,"priorFailures":2,"mayHaveReachedWecom":true,"mayHaveReachedAt":"2026-11-30T08:05:00.000Z"}';

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
    // The flag without its time (written before the time was kept): in doubt since acceptance.
    expect(decodeQueuedMessage(DEFERRED_COPY_BODY)).toMatchObject({
      generation: 2,
      inDoubt: { since: '2026-11-30T08:00:00.000Z' },
    });
    expect(decodeQueuedMessage(DEFERRED_COPY_BODY)).not.toHaveProperty('mayHaveReachedWecom');
  });

  it('decodes a deferred copy in doubt as this format writes it (flag and time), without the wire names', () => {
    const m = decodeQueuedMessage(IN_DOUBT_BODY);

    expect(m).toMatchObject({
      generation: 3,
      priorFailures: 2,
      inDoubt: { since: '2026-11-30T08:05:00.000Z' },
    });
    expect(m).not.toHaveProperty('mayHaveReachedWecom');
    expect(m).not.toHaveProperty('mayHaveReachedAt');
  });

  it('encodes a freshly stored record to the very bytes the previous version wrote', () => {
    const old = decodeQueuedMessage(FIRST_DELIVERY_BODY);
    if (!old) throw new Error('fixture does not decode');
    const record = newRecord(old);

    expect(encodeQueuedMessage(toQueuedMessage(record))).toBe(FIRST_DELIVERY_BODY);
    // A version rolled back to reads the in-doubt marker under its wire names: the very bytes it would write.
    expect(
      encodeQueuedMessage({
        ...toQueuedMessage(record),
        generation: 3,
        priorFailures: 2,
        inDoubt: { since: '2026-11-30T08:05:00.000Z' },
      }),
    ).toBe(IN_DOUBT_BODY);
  });

  it('round-trips a message in doubt, and one that is not', () => {
    const m = decodeQueuedMessage(FIRST_DELIVERY_BODY);
    if (!m) throw new Error('fixture does not decode');
    const inDoubt = { ...m, generation: 1, inDoubt: { since: '2026-11-30T08:01:00.000Z' } };

    expect(decodeQueuedMessage(encodeQueuedMessage(inDoubt))).toEqual(inDoubt);
    expect(decodeQueuedMessage(encodeQueuedMessage(m))).toEqual(m);
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

  it('reads the held slots of a body queued before reservations were typed, and writes them typed', () => {
    const legacy = DEFERRED_COPY_BODY.replace(
      ',"mayHaveReachedWecom":true}',
      ',"part":{"touser":["zhangsan","lisi"],"held":{"zhangsan":1764489603158,"~broadcast":1764489615000,"~app:2":1764489620000}}}',
    );

    const m = decodeQueuedMessage(legacy);

    expect(m?.part).toEqual({
      touser: ['zhangsan', 'lisi'],
      reservations: {
        members: { zhangsan: 1764489603158 },
        broadcastMs: 1764489615000,
        call: { slotMs: 1764489620000, personTimes: 2 },
      },
    });
    if (!m) throw new Error('does not decode');
    expect(decodeQueuedMessage(encodeQueuedMessage(m))).toEqual(m);
    expect(encodeQueuedMessage(m)).not.toContain('"held"');
  });
});
