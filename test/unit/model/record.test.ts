import { describe, expect, it } from 'vitest';
import {
  applyChange,
  changes,
  inDoubtOnRedelivery,
  newRecord,
  type RecordOrigin,
  receiptOf,
  withFirstDelivery,
} from '#lib/model/index.js';

const origin: RecordOrigin = {
  id: 'msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC',
  app: 'ops',
  priority: 'normal',
  request: {
    app: 'ops',
    priority: 'normal',
    metadata: { ticket: 'OPS-1' },
    recipients: { touser: ['zhangsan'], toparty: [], totag: [] },
    msgtype: 'text',
    content: { content: 'hello' },
    options: {},
  },
  apiKey: 'ops-key',
  createdAt: '2026-12-01T08:00:00.000Z',
  expiresAt: 1_767_081_600,
};
const AT = '2026-12-01T08:00:02.000Z';

describe('newRecord', () => {
  it('is queued, unattempted, generation 0, with the request metadata and one queued event', () => {
    expect(newRecord(origin)).toEqual({
      ...origin,
      status: 'queued',
      attempts: 0,
      updatedAt: origin.createdAt,
      metadata: { ticket: 'OPS-1' },
      events: [{ at: origin.createdAt, type: 'queued' }],
      generation: 0,
    });
  });
});

describe('withFirstDelivery', () => {
  const receipt = { msgid: 'MSGID', invaliduser: 'ghost' };

  it('reads a pending record with its first delivery as the send change would have written it', () => {
    const viaChange = applyChange(newRecord(origin), changes.send(AT, receipt));

    expect(withFirstDelivery(newRecord(origin), { at: AT, receipt })).toEqual({
      ...viaChange,
      firstDelivery: { at: AT, receipt },
    });
  });

  it('never turns a failed, expired or recalled record back into sent', () => {
    const failed = applyChange(newRecord(origin), changes.withdraw(AT, 'enqueue_failed'));
    const expired = applyChange(newRecord(origin), changes.expire(AT, { code: 'ttl_expired', message: 'x' }));
    const sent = applyChange(newRecord(origin), changes.send(AT, { msgid: 'FIRST' }));
    const recalled = sent && applyChange(sent, changes.recall(AT));
    for (const record of [failed, expired, recalled]) {
      if (!record) throw new Error('no record');
      expect(withFirstDelivery(record, { at: AT, receipt })).toEqual(record);
    }
  });

  it('leaves a record without a first delivery as it is', () => {
    expect(withFirstDelivery(newRecord(origin), undefined)).toEqual(newRecord(origin));
  });
});

describe('receiptOf', () => {
  it("keeps the msgid, only the lists that name someone, and a card's response_code (for card updates)", () => {
    expect(
      receiptOf({ msgid: 'M', invaliduser: 'a|b', invalidparty: '', invalidtag: '', response_code: 'rc' }),
    ).toEqual({ msgid: 'M', invaliduser: 'a|b', response_code: 'rc' });
    expect(receiptOf({ msgid: 'M', response_code: '' })).toEqual({ msgid: 'M' });
  });
});

describe('inDoubtOnRedelivery (the redelivery proof)', () => {
  const missed = (receive: number) =>
    applyChange(
      newRecord(origin),
      changes.retry(AT, {
        receive,
        number: receive,
        startedAt: AT,
        inDoubt: false,
        earlierInDoubt: undefined,
        detail: 'x',
      }),
    );

  it('is false only when the receive right before this one certainly missed WeCom', () => {
    const stored = missed(1);
    if (!stored) throw new Error('no record');
    expect(inDoubtOnRedelivery(stored, 0, 2)).toBe(false);
    // Receive 3: something happened on receive 2 that left no proof (a crash after sending, say).
    expect(inDoubtOnRedelivery(stored, 0, 3)).toBe(true);
    // A proof about another deferral generation says nothing about this copy.
    expect(inDoubtOnRedelivery(stored, 1, 2)).toBe(true);
  });

  it('is true without any proof, and for good once an attempt may have reached WeCom', () => {
    expect(inDoubtOnRedelivery(newRecord(origin), 0, 2)).toBe(true);
    const sticky = { ...(missed(1) ?? newRecord(origin)), inDoubt: { since: origin.createdAt } };
    expect(inDoubtOnRedelivery(sticky, 0, 2)).toBe(true);
  });

  it('lets the first receive of a deferred copy rely on the deferral', () => {
    const deferred = applyChange(newRecord(origin), changes.defer(AT, 1, undefined, 'quota'));
    if (!deferred) throw new Error('no record');
    expect(inDoubtOnRedelivery(deferred, 1, 1)).toBe(false);
  });
});
