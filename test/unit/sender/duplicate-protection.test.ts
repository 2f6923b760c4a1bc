import { describe, expect, it } from 'vitest';
import { STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { StoreUnavailableError } from '#lib/store/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const lostAnswer = async (): Promise<never> => {
  throw new WecomTransportError('socket hang up after the request was sent', 'ECONNRESET', { inDoubt: true });
};

/**
 * WeCom's duplicate check under its strict reading compares only flagged requests with flagged requests, byte for
 * byte. So every attempt of a message must be the very same request, whatever happened in between.
 */
describe('duplicate protection: every attempt is the same request', () => {
  it('stays identical across a lost answer, a retry copy past the receive limit, a deferral and a crash', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_same', START);
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer, lostAnswer, lostAnswer, lostAnswer, lostAnswer);

    for (let receive = 1; receive <= 5; receive++) {
      await processBatch(h.deps, [m.sqs(m.body(), receive)]);
      clock.advance(4_000); // each retry after its backoff, when the member's next slot (3.2 s on normal) is due
    }
    // Receive 5 travelled on as a fresh copy (SQS would move the original to its DLQ after 6).
    const copy = h.lanes.enqueued.at(-1)?.message;
    if (!copy) throw new Error('no retry copy');
    await h.pauseStore.put('ops', {
      kind: 'rate_limited',
      untilMs: clock.now() + 60_000,
      sinceMs: clock.now(),
      level: 0,
      reason: '45009',
    });
    clock.advance(5_000); // this container reads the pause again
    await processBatch(h.deps, [m.sqs(copy, 1)]); // deferred: paused by another container
    const deferred = h.lanes.enqueued.at(-1)?.message;
    if (!deferred || deferred.generation !== copy.generation + 1) throw new Error('no deferred copy');
    h.pauseStore.pauses.clear();
    clock.advance(61_000);
    h.store.failTransitionsTo.add(STATUS.sent);
    await processBatch(h.deps, [m.sqs(deferred, 1)]); // sent, recording it fails (like a crash)
    h.store.failTransitionsTo.clear();
    clock.advance(4_000); // SQS redelivers after the retry delay
    await processBatch(h.deps, [m.sqs(deferred, 2)]); // the redelivery resends

    expect(h.wecom.sends.length).toBeGreaterThanOrEqual(7);
    for (const body of h.wecom.sends) expect(body).toEqual(h.wecom.sends[0]);
    expect(h.wecom.sends[0]).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 3600 });
    expect(h.store.record('msg_same')?.status).toBe(STATUS.sent);
  });

  it('keeps the client’s own interval on every attempt when it asked for the check itself', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const request = {
      ...textRequest(),
      options: { enable_duplicate_check: 1 as const, duplicate_check_interval: 600 },
    };
    const m = queued('msg_client', START, request, { duplicateCheckSeconds: 600 });
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(4_000); // the retry after its backoff, when the member's next slot is due
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends[1]).toEqual(h.wecom.sends[0]);
    expect(h.wecom.sends[0]).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 600 });
  });

  it('sends an opted-out message without the check, and resends it after a lost answer (at least once)', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued(
      'msg_optout',
      START,
      { ...textRequest(), duplicateProtection: false },
      { duplicateCheckSeconds: 0 },
    );
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(5 * 3_600_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends).toHaveLength(2);
    for (const body of h.wecom.sends) expect(body).not.toHaveProperty('enable_duplicate_check');
    expect(h.store.record('msg_optout')?.status).toBe(STATUS.sent);
  });

  it('does not resend a message that may have reached WeCom once the check’s interval no longer covers it', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_late', START);
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer, async () => {
      throw new WecomApiError(-1, 'system busy', 'message/send');
    });
    await processBatch(h.deps, [m.sqs(m.body(), 1)]); // may have reached WeCom at START
    clock.advance(60_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]); // -1: certainly not this time, but the first still may have

    clock.advance(3_600_000 - 60_000 - 30_000); // 30 s before the 1 h interval ends: inside the 60 s guard
    await processBatch(h.deps, [m.sqs(m.body(), 3)]);

    expect(h.wecom.sends).toHaveLength(2);
    expect(h.store.record('msg_late')).toMatchObject({
      status: STATUS.failed,
      error: { code: 'delivery_unknown' },
      inDoubt: { since: new Date(START).toISOString() },
    });
  });

  it('resends a message whose earlier attempt may have reached WeCom while the interval still covers it', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_in_time', START);
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    clock.advance(3_600_000 - 61_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends).toHaveLength(2);
    expect(h.store.record('msg_in_time')?.status).toBe(STATUS.sent);
  });

  it.each([
    ['a gettoken timeout', 'gettoken'],
    ['a DynamoDB throttle under the quota counters', 'quota'],
  ] as const)('does not count %s as an attempt that may have reached WeCom (review M3)', async (_, where) => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_m3', START);
    await h.store.create(m.record);
    if (where === 'gettoken') {
      h.wecom.getToken = async () => {
        throw new WecomTransportError('WeCom gettoken: headers timeout', 'UND_ERR_HEADERS_TIMEOUT', {
          inDoubt: true,
        });
      };
    } else {
      h.deps.quota.acquire = async () => {
        throw new StoreUnavailableError({ cause: new Error('ProvisionedThroughputExceededException') });
      };
    }

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    const record = h.store.record('msg_m3');
    expect(h.wecom.sends).toHaveLength(0);
    expect(record).toMatchObject({
      status: STATUS.queued,
      missed: { receive: 1 },
    });
    expect(record).not.toHaveProperty('inDoubt');
  });

  it('counts a lost answer of message/send itself as an attempt that may have reached WeCom', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_send_lost', START);
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.store.record('msg_send_lost')).toMatchObject({
      inDoubt: { since: new Date(START).toISOString() },
    });
  });

  it('never turns a record ingest failed meanwhile into sent with its first delivery (review M5)', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_withdrawn', START);
    await h.store.create({
      ...m.record,
      status: STATUS.failed,
      error: { code: 'enqueue_failed', message: 'x' },
    });

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.store.record('msg_withdrawn')).toMatchObject({
      status: STATUS.failed,
      error: { code: 'enqueue_failed' },
    });
  });
});
