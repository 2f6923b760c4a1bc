import { describe, expect, it } from 'vitest';
import {
  applyChange,
  changes,
  type FailedAttempt,
  FRESH_CANCEL_AFTER_MS,
  MAX_LISTED_DEFERRALS,
  MAX_LISTED_RETRIES,
  type MessageStatus,
  STATUS,
  type StatusChange,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type TransitionName,
} from '#lib/model/index.js';
import { messageRecord } from '#test/helpers/message-records.js';

const AT = '2026-12-01T08:00:00.000Z';
const attempt: FailedAttempt = {
  receive: 2,
  number: 2,
  startedAt: AT,
  inDoubt: false,
  earlierInDoubt: undefined,
  detail: 'errcode -1',
};

/** One change per name, built the only way callers can build one. */
const EXAMPLES: Record<TransitionName, StatusChange> = {
  withdraw: changes.withdraw(AT, 'superseded'),
  send: changes.send(AT, { msgid: 'MSGID' }),
  retry: changes.retry(AT, attempt),
  die: changes.die(AT, attempt, { code: 'budget_exhausted', message: 'gave up' }),
  expire: changes.expire(AT, { code: 'ttl_expired', message: 'too late' }),
  defer: changes.defer(AT, 1, undefined, 'quota app-minute; retry in 30s'),
  sendPart: changes.sendPart(AT, { msgid: 'MSGID' }, { touser: ['a'], waiting: 1, generation: 1 }),
  sendSegment: changes.sendSegment(
    AT,
    { msgid: 'MSGID' },
    { segment: 0, count: 2, touser: ['a'], generation: 1 },
  ),
  fail: changes.fail(AT, { code: 'wecom_rejected', message: 'no' }),
  recall: changes.recall(AT),
  cancel: changes.cancel(AT, 'ci'),
  deadLetter: changes.deadLetter(AT, 0, { code: 'dead_lettered', message: 'in the DLQ' }),
  redrive: changes.redrive(AT, {
    from: 0,
    to: 1,
    inDoubt: { since: AT },
    forced: false,
    detail: 'from the DLQ',
  }),
};

const ALL_STATUSES = Object.values(STATUS);

describe('the status transition table', () => {
  it('allows exactly the moves of SPEC §2, and no others', () => {
    // queued → (deferred ⇄ queued) → sent | failed | dead | expired; sent → recalled. Plus: ingest fails a record it
    // could not queue, and a message an operator redrives from the DLQ (dead) may still be sent or queued again.
    const expected = [
      'dead→queued',
      'queued→expired',
      'deferred→expired',
      'queued→failed',
      'queued→sent',
      'deferred→sent',
      'dead→sent',
      'queued→queued',
      'deferred→queued',
      'queued→dead',
      'deferred→dead',
      'queued→deferred',
      'deferred→deferred',
      'deferred→failed',
      'sent→recalled',
      // Scheduled: its copy comes to the sender at its time and moves on from there like a queued one.
      'scheduled→failed',
      'scheduled→sent',
      'scheduled→queued',
      'scheduled→dead',
      'scheduled→expired',
      'scheduled→deferred',
      // Cancel: a client takes back a message not yet sent.
      'scheduled→canceled',
      'queued→canceled',
      'deferred→canceled',
    ];
    const edges = new Set(
      Object.values(TRANSITIONS).flatMap((t) => t.from.map((from: MessageStatus) => `${from}→${t.to}`)),
    );
    expect([...edges].sort()).toEqual([...expected].sort());
  });

  it('never leaves failed, expired, recalled or canceled, and leaves sent only by a recall', () => {
    for (const [name, t] of Object.entries(TRANSITIONS)) {
      const from: readonly MessageStatus[] = t.from;
      expect(from, name).not.toContain(STATUS.canceled);
      expect(from, name).not.toContain(STATUS.failed);
      expect(from, name).not.toContain(STATUS.expired);
      expect(from, name).not.toContain(STATUS.recalled);
      if (from.includes(STATUS.sent)) expect(name).toBe('recall');
    }
  });

  it.each(Object.keys(TRANSITIONS) as TransitionName[])(
    '%s: applies from each listed status to its target, and from no other status',
    (name) => {
      const change = EXAMPLES[name];
      expect(change).toMatchObject({ transition: name, ...TRANSITIONS[name], at: AT });
      for (const status of ALL_STATUSES) {
        // A cancel needs a copy that may be fenced (generation 1); the fence has tests of its own below.
        const record = messageRecord({ status, ...(name === 'cancel' ? { generation: 1 } : {}) });
        const after = applyChange(record, change);
        if ((TRANSITIONS[name].from as readonly MessageStatus[]).includes(status)) {
          expect(after?.status, `${name} from ${status}`).toBe(TRANSITIONS[name].to);
          expect(after?.events?.at(-1)).toEqual(change.event);
        } else {
          expect(after, `${name} from ${status}`).toBeUndefined();
        }
      }
    },
  );

  it('moves every sender outcome out of a status the sender still works on', () => {
    for (const name of ['retry', 'die', 'expire', 'defer', 'fail'] as const) {
      expect([...TRANSITIONS[name].from].sort()).toEqual([STATUS.deferred, STATUS.queued, STATUS.scheduled]);
      expect(TERMINAL_STATUSES.has(TRANSITIONS[name].to)).toBe(name !== 'retry' && name !== 'defer');
    }
  });
});

describe('the cancel fence (changes.cancel `unclaimed`)', () => {
  const cancel = changes.cancel(AT, 'ci');
  const longAgo = new Date(Date.parse(AT) - FRESH_CANCEL_AFTER_MS - 1).toISOString();

  it('cancels a copy that has not claimed the right to send, and never one that has', () => {
    expect(
      applyChange(messageRecord({ status: 'deferred', generation: 2, claimedGeneration: 1 }), cancel)?.status,
    ).toBe('canceled');
    expect(
      applyChange(messageRecord({ status: 'deferred', generation: 2, claimedGeneration: 2 }), cancel),
    ).toBeUndefined();
    expect(
      applyChange(messageRecord({ status: 'scheduled', generation: 1, claimedGeneration: 1 }), cancel),
    ).toBeUndefined();
  });

  it('leaves a message sent at once to its unclaimed first copy until the window has passed', () => {
    expect(
      applyChange(messageRecord({ status: 'queued', generation: 0, createdAt: AT }), cancel),
    ).toBeUndefined();
    expect(
      applyChange(messageRecord({ status: 'queued', generation: 0, createdAt: longAgo }), cancel)?.status,
    ).toBe('canceled');
    expect(
      applyChange(
        messageRecord({ status: 'queued', generation: 0, createdAt: longAgo, claimedGeneration: 0 }),
        cancel,
      ),
    ).toBeUndefined();
  });

  it('refuses a message that may have reached WeCom, or reached some of its recipients', () => {
    const base = { status: 'deferred' as const, generation: 2 };
    expect(applyChange(messageRecord({ ...base, inDoubt: { since: AT } }), cancel)).toBeUndefined();
    const part = { touser: ['a'], sentAt: AT, wecom: { msgid: 'M' } };
    expect(applyChange(messageRecord({ ...base, parts: [part] }), cancel)).toBeUndefined();
  });
});

describe('changes', () => {
  it('counts an attempt for every sender outcome that called WeCom, and none for a deferral or a recall', () => {
    expect(EXAMPLES.send.attemptsDelta).toBe(1);
    expect(EXAMPLES.retry.attemptsDelta).toBe(1);
    expect(EXAMPLES.die.attemptsDelta).toBe(1);
    expect(EXAMPLES.fail.attemptsDelta).toBe(1);
    expect(EXAMPLES.defer.attemptsDelta).toBeUndefined();
    expect(EXAMPLES.expire.attemptsDelta).toBeUndefined();
    expect(EXAMPLES.recall.attemptsDelta).toBeUndefined();
    expect(EXAMPLES.withdraw.attemptsDelta).toBeUndefined();
  });

  it('records proof of a missed attempt with its receive, and clears it after an unknown outcome', () => {
    const proved = applyChange(messageRecord(), changes.retry(AT, attempt));
    expect(proved).toMatchObject({ missed: { receive: 2 } });
    expect(proved).not.toHaveProperty('inDoubt');

    const unknown = applyChange(proved ?? messageRecord(), changes.retry(AT, { ...attempt, inDoubt: true }));
    expect(unknown).not.toHaveProperty('missed');
    expect(unknown?.inDoubt).toBeDefined();
  });

  it('keeps the sticky marker (and the earliest time) through a definite error and through a deferral', () => {
    const EARLIER = '2026-12-01T07:59:00.000Z';
    const earlier = { ...attempt, earlierInDoubt: { since: EARLIER } };
    expect(changes.retry(AT, earlier)).toMatchObject({
      inDoubt: { since: EARLIER },
    });
    expect(changes.defer(AT, 2, { since: EARLIER }, 'paused')).toMatchObject({
      inDoubt: { since: EARLIER },
    });
    expect(changes.defer(AT, 2, undefined, 'paused')).not.toHaveProperty('inDoubt');
    // The first time wins: a later unknown attempt does not move it.
    const first = applyChange(messageRecord(), changes.retry(AT, { ...attempt, inDoubt: true }));
    const later = first && applyChange(first, changes.retry('2026-12-01T09:00:00.000Z', earlier));
    expect(later?.inDoubt?.since).toBe(AT);
    // A deferral proves its own receive missed WeCom: receive 0 of the new copy's generation.
    expect(applyChange(messageRecord(), changes.defer(AT, 2, undefined, 'paused'))).toMatchObject({
      status: STATUS.deferred,
      generation: 2,
      missed: { receive: 0 },
    });
  });

  it('lists the first retries and deferrals, then keeps only the newest and counts the rest', () => {
    let record = messageRecord();
    for (let n = 1; n <= MAX_LISTED_RETRIES + 5; n++) {
      record = applyChange(record, changes.retry(AT, { ...attempt, number: n })) ?? record;
    }
    for (let g = 1; g <= MAX_LISTED_DEFERRALS + 7; g++) {
      record = applyChange(record, changes.defer(AT, g, undefined, `quota ${g}`)) ?? record;
    }
    expect(record.events?.filter((e) => e.type === 'retry')).toHaveLength(MAX_LISTED_RETRIES);
    expect(record.events?.filter((e) => e.type === 'deferred')).toHaveLength(MAX_LISTED_DEFERRALS);
    expect(record.eventsOmitted).toBe(12);
    expect(record.lastEvent).toEqual({
      at: AT,
      type: 'deferred',
      detail: `quota ${MAX_LISTED_DEFERRALS + 7}`,
    });
  });

  it('lets the operator changes move only the generation they read: a newer copy owns the message', () => {
    const current = messageRecord({ status: STATUS.queued, generation: 3 });

    expect(applyChange(current, changes.deadLetter(AT, 2, { code: 'x', message: 'y' }))).toBeUndefined();
    expect(applyChange(current, changes.deadLetter(AT, 3, { code: 'x', message: 'y' }))?.status).toBe('dead');
    const redrive = { inDoubt: { since: AT }, forced: false, detail: 'd' };
    expect(applyChange(current, changes.redrive(AT, { ...redrive, from: 2, to: 4 }))).toBeUndefined();
    expect(applyChange(current, changes.redrive(AT, { ...redrive, from: 3, to: 4 }))?.generation).toBe(4);
  });

  it('redrives with the sticky marker, no earlier proof, no error; only a forced one moves the earliest time', () => {
    const EARLIER = '2026-12-01T07:00:00.000Z';
    const dead = messageRecord({
      status: STATUS.dead,
      generation: 1,
      inDoubt: { since: EARLIER },
      missed: { receive: 2 },
      error: { code: 'dead_lettered', message: 'in the DLQ' },
    });

    const redriven = applyChange(
      dead,
      changes.redrive(AT, { from: 1, to: 2, inDoubt: { since: AT }, forced: false, detail: 'd' }),
    );
    const forced = applyChange(
      dead,
      changes.redrive(AT, { from: 1, to: 2, inDoubt: { since: AT }, forced: true, detail: 'd' }),
    );

    expect(redriven).toMatchObject({
      status: 'queued',
      generation: 2,
      inDoubt: { since: EARLIER },
    });
    expect(redriven?.events?.at(-1)).toEqual({ at: AT, type: 'redriven', detail: 'd' });
    for (const field of ['error', 'missed']) expect(redriven).not.toHaveProperty(field);
    expect(forced?.inDoubt?.since).toBe(AT);
  });

  it('explains a withdrawn record with its reason', () => {
    expect(changes.withdraw(AT, 'enqueue_failed')).toMatchObject({
      error: { code: 'enqueue_failed', message: 'the queue was unavailable; the client was told to retry' },
      event: { at: AT, type: 'failed', detail: 'enqueue_failed' },
    });
  });
});
