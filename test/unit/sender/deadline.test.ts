import { describe, expect, it } from 'vitest';
import { decodeQueuedMessage, MAX_LISTED_RETRIES, type QueuedMessage, STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const busy = async (): Promise<never> => {
  throw new WecomApiError(-1, 'system busy', 'message/send');
};

/**
 * Plays a WeCom that answers -1 to every send for `outageMs`, with the message coming back as SQS or a fresh copy
 * would bring it; returns the last copy and receive handled.
 */
async function outage(
  h: ReturnType<typeof senderHarness>,
  clock: ReturnType<typeof fakeClock>,
  m: ReturnType<typeof queued>,
  outageMs: number,
) {
  h.wecom.send = async (_token, body) => {
    h.wecom.sends.push(body);
    if (clock.now() - START < outageMs) return busy();
    return { msgid: `msgid-${h.wecom.sends.length}` };
  };
  let copy: QueuedMessage = m.body();
  let receive = 1;
  for (let i = 0; i < 10_000; i++) {
    const incoming = m.sqs(copy, receive);
    const before = h.lanes.enqueued.length;
    const out = await processBatch(h.deps, [incoming]);
    const status = h.store.record(m.record.id)?.status;
    if (status !== STATUS.queued && status !== STATUS.deferred) break;
    if (out.failures.length > 0) {
      clock.advance((h.lanes.visibility.at(-1)?.seconds ?? 1) * 1000);
      receive++;
    } else if (h.lanes.enqueued.length > before) {
      const next = h.lanes.enqueued.at(-1);
      if (!next) throw new Error('no copy');
      clock.advance(next.delaySeconds * 1000);
      copy = next.message;
      receive = 1;
    } else throw new Error('message neither retried nor re-enqueued');
  }
}

describe('a message is retried for its time budget, not for a number of receives', () => {
  it('survives a WeCom outage far longer than 6 receives and is delivered once after it, never dead', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    h.deps.retry = { baseSeconds: 5, capSeconds: 600 };
    const m = queued('msg_outage', START);
    await h.store.create(m.record);

    await outage(h, clock, m, 30 * 60_000);

    const record = h.store.record('msg_outage');
    expect(record?.status).toBe(STATUS.sent);
    expect(record?.attempts).toBeGreaterThan(6);
    // Retries past the 5th receive travelled as fresh copies carrying their count: the backoff kept growing.
    const copies = h.lanes.enqueued.map((e) => e.message);
    expect(copies.length).toBeGreaterThan(0);
    expect(copies.map((c) => c.priorFailures)).toEqual(
      [...copies.map((c) => c.priorFailures)].sort((a, b) => (a ?? 0) - (b ?? 0)),
    );
    // The record lists at most MAX_LISTED_RETRIES retries and counts the rest.
    expect(record?.events?.filter((e) => e.type === 'retry').length).toBeLessThanOrEqual(MAX_LISTED_RETRIES);
  });

  it('marks a message dead once its budget is used up, with the last error, even when the error is not WeCom’s', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const app = h.deps.config.apps.ops;
    if (!app) throw new Error('no app');
    app.delivery = { budgetSeconds: 600, configErrorHoldSeconds: 3600, duplicateCheckSeconds: 3600 };
    h.deps.quota.acquire = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    const m = queued('msg_budget', START);
    await h.store.create(m.record);

    await outage(h, clock, m, Number.POSITIVE_INFINITY);

    expect(h.store.record('msg_budget')).toMatchObject({
      status: STATUS.dead,
      error: { code: 'budget_exhausted', message: expect.stringContaining('600 s') },
    });
    expect(clock.now() - START).toBeLessThanOrEqual(600_000);
  });

  it('expires a message whose ttl_seconds passed while it waited in the queue, without calling WeCom', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_ttl', START, { ...textRequest(), ttlSeconds: 60 });
    await h.store.create(m.record);
    clock.advance(61_000);

    const out = await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(out.failures).toEqual([]);
    expect(h.wecom.sends).toHaveLength(0);
    expect(h.store.record('msg_ttl')).toMatchObject({
      status: STATUS.expired,
      error: { code: 'ttl_expired' },
    });
  });

  it('expires at once a message whose wait for quota or a pause would end after its ttl_seconds', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    await h.pauseStore.put('ops', {
      kind: 'rate_limited',
      untilMs: START + 3_600_000,
      sinceMs: START,
      level: 2,
      reason: 'errcode 45009',
    });
    const m = queued('msg_alert', START, { ...textRequest(), ttlSeconds: 300 });
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.lanes.enqueued).toHaveLength(0);
    expect(h.store.record('msg_alert')).toMatchObject({
      status: STATUS.expired,
      error: { message: expect.stringContaining('45009') },
    });
  });

  it('keeps the budget across deferred copies: it counts from acceptance, not from the copy', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const app = h.deps.config.apps.ops;
    if (!app) throw new Error('no app');
    app.delivery = { budgetSeconds: 3_600, configErrorHoldSeconds: 86_400, duplicateCheckSeconds: 3600 };
    h.wecom.send = async (_t, body) => {
      h.wecom.sends.push(body);
      throw new WecomApiError(45009, 'api freq out of limit', 'message/send');
    };
    const m = queued('msg_chain', START);
    await h.store.create(m.record);

    let copy: QueuedMessage = m.body();
    for (let i = 0; i < 100 && h.store.record('msg_chain')?.status !== STATUS.dead; i++) {
      await processBatch(h.deps, [m.sqs(copy, 1)]);
      const next = h.lanes.enqueued.at(-1);
      if (!next || next.message.generation === copy.generation) break;
      copy = next.message;
      clock.advance(next.delaySeconds * 1000);
    }

    expect(h.store.record('msg_chain')).toMatchObject({
      status: STATUS.dead,
      error: { code: 'budget_exhausted' },
    });
    expect(clock.now() - START).toBeLessThanOrEqual(3_600_000);
  });

  it('gives a copy an operator redrove a fresh budget from the redrive, but keeps the client’s ttl_seconds', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const budget = queued('msg_redriven', START);
    const ttl = queued('msg_redriven_ttl', START, { ...textRequest(), ttlSeconds: 3_600 });
    for (const m of [budget, ttl]) await h.store.create({ ...m.record, generation: 1 });
    clock.advance(25 * 3_600_000); // past the 24 h default budget and the ttl
    const redrivenAt = new Date(clock.now() - 60_000).toISOString();

    await processBatch(h.deps, [
      budget.sqs({ ...budget.body(1), redrivenAt }, 1),
      ttl.sqs({ ...ttl.body(1), redrivenAt }, 1),
    ]);

    expect(h.store.record('msg_redriven')?.status).toBe(STATUS.sent);
    expect(h.store.record('msg_redriven_ttl')?.status).toBe(STATUS.expired);
    expect(h.wecom.sends).toHaveLength(1);
  });

  it('decodes a queue body written before these fields existed and gives it the default budget', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_old_body', START, textRequest(), { duplicateCheckSeconds: undefined });
    await h.store.create(m.record);
    const old = JSON.stringify({ ...m.body() });
    expect(decodeQueuedMessage(old)).toBeDefined();
    h.wecom.script.push(async () => {
      throw new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true });
    });
    clock.advance(23 * 3_600_000); // 23 h after acceptance: within the 24 h default budget

    const out = await processBatch(h.deps, [{ ...m.sqs(m.body(), 1), body: old }]);

    expect(out.failures).toHaveLength(1);
    expect(h.store.record('msg_old_body')?.status).toBe(STATUS.queued);
  });
});
