import { describe, expect, it } from 'vitest';
import {
  changes,
  encodeQueuedMessage,
  encodeReleaseNotice,
  FRESH_CANCEL_AFTER_MS,
  newRecord,
  type QueuedMessage,
  STATUS,
  toQueuedMessage,
  UNCLAIMED_SEND_MS,
} from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const MINUTE = 60_000;

/** A record accepted for `dueMs` (spread 0), as ingest writes it, and its first copy. */
function scheduledAt(id: string, nowMs: number, dueMs: number) {
  const due = new Date(dueMs).toISOString();
  const record = newRecord({
    id,
    app: 'ops',
    priority: 'normal',
    request: textRequest(),
    apiKey: 'unit',
    createdAt: new Date(nowMs).toISOString(),
    expiresAt: Math.floor(dueMs / 1000) + 86_400,
    duplicateCheckSeconds: 3600,
    schedule: { dueAt: due, releaseAt: due, reason: 'send_at' },
  });
  return { record, copy: toQueuedMessage(record) };
}

const incoming = (id: string, body: string, receiveCount = 1) => ({
  sqsMessageId: `${id}-${receiveCount}`,
  receiptHandle: `rh-${id}-${receiveCount}`,
  body,
  receiveCount,
  lane: 'normal' as const,
});

describe('the sender and scheduled messages', () => {
  it('answers a release notice by queuing the copy with the SQS delay left to its release, sending nothing', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const s = scheduledAt('msg_far', START, START + 2 * 86_400_000);
    await h.store.create(s.record);
    clock.advance(2 * 86_400_000 - 4 * MINUTE - 30_000); // the timer fired 4.5 minutes before the release

    await processBatch(h.deps, [incoming('n1', encodeReleaseNotice('msg_far'))]);

    expect(h.wecom.sends).toEqual([]);
    expect(h.lanes.enqueued).toHaveLength(1);
    expect(h.lanes.enqueued[0]).toMatchObject({ lane: 'normal', delaySeconds: 270 });
    expect(h.lanes.enqueued[0]?.message).toMatchObject({
      id: 'msg_far',
      generation: 1,
      notBeforeMs: s.copy.notBeforeMs,
    });
  });

  it('ignores a release notice of a message no longer scheduled (canceled, or released already)', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const s = scheduledAt('msg_gone', START, START + 86_400_000);
    await h.store.create(s.record);
    await h.store.transition('msg_gone', changes.cancel(new Date(START).toISOString(), 'unit'));

    await processBatch(h.deps, [incoming('n1', encodeReleaseNotice('msg_gone'))]);
    expect(h.lanes.enqueued).toEqual([]);
  });

  it('never sends a scheduled copy before its release: one a moment early waits the rest', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const s = scheduledAt('msg_near', START, START + 2_000);
    await h.store.create(s.record);
    const slept: number[] = [];
    h.deps.sleep = async (ms) => {
      slept.push(ms);
      clock.advance(ms);
    };
    let sentAt: number | undefined;
    const send = h.wecom.send.bind(h.wecom);
    h.wecom.send = async (token, body) => {
      sentAt = clock.now();
      return send(token, body);
    };

    await processBatch(h.deps, [incoming('msg_near', encodeQueuedMessage(s.copy))]);

    expect(slept).toEqual([2_000]);
    expect(sentAt).toBeGreaterThanOrEqual(START + 2_000);
    expect(h.store.record('msg_near')?.status).toBe(STATUS.sent);
  });

  it('stands a copy down, without calling WeCom, when its message was canceled before it claimed', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const s = scheduledAt('msg_c', START, START);
    await h.store.create(s.record);
    await h.store.transition('msg_c', changes.cancel(new Date(START).toISOString(), 'unit'));

    const out = await processBatch(h.deps, [incoming('msg_c', encodeQueuedMessage(s.copy))]);
    expect(out.failures).toEqual([]);
    expect(h.wecom.sends).toEqual([]);
    expect(h.store.record('msg_c')?.status).toBe(STATUS.canceled);
  });

  it('lets a fresh copy go unclaimed in its first 30 s, and claims first after that', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const young = queued('msg_young', START);
    await h.store.create(young.record);
    await processBatch(h.deps, [young.sqs(young.body(), 1)]);
    expect(h.store.records.get('msg_young')?.claimedGeneration).toBeUndefined();

    const old = queued('msg_old', START - UNCLAIMED_SEND_MS - 1, textRequest({ touser: ['lisi'] }));
    await h.store.create(old.record);
    await processBatch(h.deps, [old.sqs(old.body(), 1)]);
    expect(h.store.records.get('msg_old')?.claimedGeneration).toBe(0);
    expect(h.wecom.sends).toHaveLength(2);
  });

  it('does not send an old fresh copy whose message was canceled once the window had passed', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const old = queued('msg_late', START - FRESH_CANCEL_AFTER_MS - 1);
    await h.store.create(old.record);
    expect(await h.store.transition('msg_late', changes.cancel(new Date(START).toISOString(), 'unit'))).toBe(
      true,
    );

    await processBatch(h.deps, [old.sqs(old.body(), 1)]);
    expect(h.wecom.sends).toEqual([]);
  });

  it('counts a scheduled message’s delivery budget from its release, not its acceptance', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    // Accepted 20 days ago for now: the 24-hour budget has not begun to run out.
    const s = scheduledAt('msg_budget', START - 20 * 86_400_000, START);
    await h.store.create(s.record);
    await processBatch(h.deps, [incoming('msg_budget', encodeQueuedMessage(s.copy as QueuedMessage))]);
    expect(h.store.record('msg_budget')?.status).toBe(STATUS.sent);
  });
});
