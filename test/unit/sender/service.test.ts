import { describe, expect, it } from 'vitest';
import { STATUS } from '#lib/model/index.js';
import { DEFAULT_RETRY, processBatch } from '#lib/sender/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');

describe('processBatch', () => {
  it('sends a first delivery with the duplicate check it was accepted with, and records it sent in one batch write', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_1', START);
    await h.store.create(m.record);

    const out = await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(out.failures).toEqual([]);
    expect(h.wecom.sends[0]).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 3600 });
    expect(h.store.record('msg_1')?.status).toBe(STATUS.sent);
    // Recorded beside the record, which is never overwritten (review M5).
    expect(h.store.records.get('msg_1')?.status).toBe(STATUS.queued);
  });

  it('sends a body queued before intervals were fixed without the check first, as it always was', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_legacy', START, textRequest(), { duplicateCheckSeconds: undefined });
    await h.store.create(m.record);
    h.wecom.script.push(async () => {
      throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
    });

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(4_000); // the retry after its backoff, when the member's next slot is due
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends[0]).not.toHaveProperty('enable_duplicate_check');
    expect(h.wecom.sends[1]).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 14_400 });
  });

  it('fetches the token before reserving quota, so a slow token cannot push a send out of its window', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const order: string[] = [];
    const get = h.deps.tokens.get.bind(h.deps.tokens);
    h.deps.tokens.get = async (app) => {
      order.push('token');
      return get(app);
    };
    const acquire = h.deps.quota.acquire.bind(h.deps.quota);
    h.deps.quota.acquire = async (d) => {
      order.push('quota');
      return acquire(d);
    };
    const m = queued('msg_order', START);
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(order).toEqual(['token', 'quota']);
  });

  it('retries a first delivery whose sent status could not be written after the backoff, then resends with the check', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_unrecorded', START);
    await h.store.create(m.record);
    h.store.failPutSent = true;

    const incoming = m.sqs(m.body(), 1);
    const first = await processBatch(h.deps, [incoming]);

    // Left for SQS to redeliver after the retry delay (the harness caps it at 1 s; 30 s by default) rather than
    // the lane's whole visibility timeout.
    expect(first.failures).toEqual([incoming.sqsMessageId]);
    expect(h.lanes.visibility).toEqual([{ receiptHandle: incoming.receiptHandle, seconds: 1 }]);
    expect(h.store.record('msg_unrecorded')?.status).toBe(STATUS.queued);

    h.store.failPutSent = false;
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    const redelivered = await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(redelivered.failures).toEqual([]);
    expect(h.store.record('msg_unrecorded')?.status).toBe(STATUS.sent);
    expect(h.wecom.sends).toHaveLength(2);
    // The same request both times: WeCom's duplicate check drops the second under either reading.
    expect(h.wecom.sends[1]).toEqual(h.wecom.sends[0]);
  });

  it('waits at least 30 s (default policy) before redelivering a message it could not record sent', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    h.deps.retry = DEFAULT_RETRY;
    h.deps.random = () => 0;
    const m = queued('msg_floor', START);
    await h.store.create(m.record);
    h.store.failPutSent = true;

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.lanes.visibility.map((v) => v.seconds)).toEqual([30]);
  });

  it('resends with duplicate check when a deferred copy was sent but recording it failed', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_2', START);
    await h.store.create({
      ...m.record,
      status: STATUS.deferred,
      generation: 1,
      missed: { receive: 0 },
    });
    h.store.failTransitionsTo.add(STATUS.sent);

    const first = await processBatch(h.deps, [m.sqs(m.body(1), 1)]);
    h.store.failTransitionsTo.clear();
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    const redelivered = await processBatch(h.deps, [m.sqs(m.body(1), 2)]);

    expect(first.failures).toHaveLength(1);
    expect(h.store.record('msg_2')?.status).toBe(STATUS.sent);
    expect(h.wecom.sends).toHaveLength(2);
    expect(h.wecom.sends[1]).toEqual(h.wecom.sends[0]);
    expect(h.wecom.sends[1]).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 3600 });
    expect(redelivered.failures).toEqual([]);
  });

  it('(legacy bodies) skips the duplicate check only when the receive right before certainly missed WeCom', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_3', START, textRequest(), { duplicateCheckSeconds: undefined });
    await h.store.create(m.record);
    h.wecom.script.push(async () => {
      throw new WecomApiError(-1, 'system busy', 'message/send');
    });

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends).toHaveLength(2);
    expect(h.wecom.sends[1]).not.toHaveProperty('enable_duplicate_check');
    expect(h.store.record('msg_3')?.status).toBe(STATUS.sent);
  });

  it('(legacy bodies) turns the duplicate check on after a timeout, whose outcome is unknown', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_4', START, textRequest(), { duplicateCheckSeconds: undefined });
    await h.store.create(m.record);
    h.wecom.script.push(async () => {
      throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
    });

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.wecom.sends[1]).toMatchObject({ enable_duplicate_check: 1 });
  });

  it('lets only one of two copies of the same deferral send', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_5', START);
    await h.store.create({ ...m.record, status: STATUS.deferred, generation: 1 });

    await processBatch(h.deps, [m.sqs(m.body(1), 1, 1)]);
    await processBatch(h.deps, [m.sqs(m.body(1), 1, 2)]);

    expect(h.wecom.sends).toHaveLength(1);
  });

  it('gives the member its slot back when WeCom answers an error, so the retry need not wait a pace', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const busy = queued('msg_busy', START);
    const lost = queued('msg_lost', START, textRequest({ touser: ['lisi'] }));
    await h.store.create(busy.record);
    await h.store.create(lost.record);
    h.wecom.script.push(
      async () => {
        throw new WecomApiError(-1, 'system busy', 'message/send');
      },
      async () => {
        throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
      },
    );
    await processBatch(h.deps, [busy.sqs(busy.body(), 1)]);
    await processBatch(h.deps, [lost.sqs(lost.body(), 1)]);

    clock.advance(1_000); // the retries come back before a pace (3.2 s on the normal lane) has passed
    await processBatch(h.deps, [busy.sqs(busy.body(), 2), lost.sqs(lost.body(), 2)]);

    // -1: nobody got it, the slot went back and the retry took it again (a second late: within what the margin
    // absorbs). Lost answer: lisi may have got it, so its slot stays taken and the retry had the one a pace later.
    const pace = 60_000 / 19;
    const next = (member: string) => h.quotaStore.pool({ app: 'ops', kind: 'member', member }, 'm', 'n').tat;
    expect(next('zhangsan')).toBeCloseTo(START + pace, 0);
    expect(next('lisi')).toBeCloseTo(START + 2 * pace, 0);
    expect(h.store.record('msg_busy')?.status).toBe(STATUS.sent);
  });

  it('fails instead of deferring forever a message larger than the app’s daily person-times', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const app = h.deps.config.apps.ops;
    if (!app) throw new Error('no app');
    app.quota.perDay = 10; // normal lane: floor(10 × 0.8 × 0.8) = 6 person-times a day
    const users = Array.from({ length: 7 }, (_, i) => `u${i}`);
    const m = queued('msg_7', START, textRequest({ touser: users }));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.wecom.sends).toHaveLength(0);
    expect(h.lanes.enqueued).toHaveLength(0);
    expect(h.store.record('msg_7')).toMatchObject({
      status: STATUS.failed,
      error: { code: 'exceeds_quota' },
    });
  });

  it('fails a broadcast it can neither resolve nor size, naming it, without calling WeCom', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_8', START, textRequest({ touser: [], toparty: ['2'], totag: ['7'] }));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.wecom.sends).toHaveLength(0);
    expect(h.store.records.get('msg_8')).toMatchObject({
      status: STATUS.failed,
      error: { code: 'broadcast_unsized', message: expect.stringContaining('party:2, tag:7') },
    });
  });

  it('charges broadcasts of configured size to the day and once to the shared broadcast allowance', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const app = h.deps.config.apps.ops;
    if (!app) throw new Error('no app');
    app.broadcast = { partySizes: { '2': 40 }, defaultSize: 15, memberShare: 0.25 };
    const m = queued('msg_8', START, textRequest({ touser: ['lisi'], toparty: ['2'], totag: ['7'] }));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.wecom.sends).toHaveLength(1);
    const day = h.quotaStore.pool({ app: 'ops', kind: 'app' }, 'd', 'n');
    expect(day.cum).toBeGreaterThanOrEqual(1 + 40 + 15);
    expect(h.quotaStore.pool({ app: 'ops', kind: 'broadcast' }, 'b', 'n').cum).toBe(1);
    expect(h.quotaStore.pool({ app: 'ops', kind: 'member', member: 'lisi' }, 'm', 'n').cum).toBe(1);
  });

  it('(legacy bodies) keeps the duplicate check on after a definite error that follows an unknown outcome', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_9', START, textRequest(), { duplicateCheckSeconds: undefined });
    await h.store.create(m.record);
    h.wecom.script.push(
      async () => {
        throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
      },
      async () => {
        throw new WecomApiError(-1, 'system busy', 'message/send');
      },
    );

    await processBatch(h.deps, [m.sqs(m.body(), 1)]); // may have reached WeCom
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    await processBatch(h.deps, [m.sqs(m.body(), 2)]); // certainly did not
    clock.advance(60_000); // a redelivery comes after its backoff, the member's next slot is free
    await processBatch(h.deps, [m.sqs(m.body(), 3)]);

    expect(h.wecom.sends[2]).toMatchObject({ enable_duplicate_check: 1 });
  });

  it('carries an unknown outcome and its time over a deferral to the deferred copy', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_10', START);
    await h.store.create(m.record);
    h.wecom.script.push(async () => {
      throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
    });
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(10_000);
    // 45009 seen by another container: this one defers.
    await h.pauseStore.put('ops', {
      kind: 'rate_limited',
      untilMs: clock.now() + 60_000,
      sinceMs: clock.now(),
      level: 0,
      reason: 'errcode 45009',
    });

    await processBatch(h.deps, [m.sqs(m.body(), 2)]);
    const copy = h.lanes.enqueued[0]?.message;
    if (!copy) throw new Error('no deferred copy');
    clock.advance(61_000);
    await processBatch(h.deps, [m.sqs(copy, 1)]);

    expect(copy).toMatchObject({
      inDoubt: { since: new Date(START).toISOString() },
    });
    expect(h.wecom.sends.at(-1)).toEqual(h.wecom.sends[0]);
    expect(h.store.record('msg_10')?.status).toBe(STATUS.sent);
  });
});
