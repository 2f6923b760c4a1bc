import { describe, expect, it } from 'vitest';
import type { AppMessageRequest } from '#lib/messages/index.js';
import { STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import {
  busyMember,
  failNextEnqueue,
  lastCopy,
  queued,
  senderHarness,
  textRequest,
} from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');

/** A text message split into `n` parts, as ingest stores it (lib/messages validate `split`). */
function splitRequest(n: number, touser = ['zhangsan', 'lisi']): AppMessageRequest {
  const pieces = Array.from({ length: n }, (_, i) => `(${i + 1}/${n})\npart ${i + 1}`);
  return {
    ...textRequest({ touser }),
    content: { content: pieces.map((p) => p.slice(p.indexOf('\n') + 1)).join('\n') },
    segments: pieces.map((content) => ({ msgtype: 'text' as const, content: { content } })),
  };
}

const contentOf = (h: ReturnType<typeof senderHarness>) =>
  h.wecom.sends.map(
    (s) => `${s.touser ?? ''}/${s.toparty ?? ''}: ${(s.text as { content: string }).content}`,
  );

describe('split content', () => {
  it('sends one part to every recipient, then queues the next as a copy of its own, until the last is sent', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_split', START, splitRequest(3));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    expect(h.wecom.sends.map((s) => (s.text as { content: string }).content)).toEqual(['(1/3)\npart 1']);
    expect(h.wecom.sends[0]).toMatchObject({ touser: 'zhangsan|lisi', msgtype: 'text' });
    const copy = lastCopy(h);
    expect(copy).toMatchObject({ generation: 1, segment: 1 });
    expect(copy.part).toBeUndefined();
    expect(h.store.record('msg_split')).toMatchObject({ status: STATUS.deferred, generation: 1 });

    // Each copy comes when the queue hands it over; one that waits for its members' slots is deferred again.
    while (h.store.record('msg_split')?.status !== STATUS.sent && h.lanes.enqueued.length < 10) {
      clock.advance(((h.lanes.enqueued.at(-1)?.delaySeconds ?? 0) + 1) * 1000);
      await processBatch(h.deps, [m.sqs(lastCopy(h), 1)]);
    }
    expect(h.wecom.sends.map((s) => (s.text as { content: string }).content)).toEqual([
      '(1/3)\npart 1',
      '(2/3)\npart 2',
      '(3/3)\npart 3',
    ]);
    expect(
      h.lanes.enqueued.filter((e) => e.message.segment !== undefined).map((e) => e.message.segment),
    ).toEqual(expect.arrayContaining([1, 2]));
    const record = h.store.record('msg_split');
    expect(record?.status).toBe(STATUS.sent);
    // Every part's msgid is kept, so a recall can reach them all.
    expect([...new Set([...(record?.parts ?? []).map((p) => p.wecom.msgid), record?.wecom?.msgid])]).toEqual([
      'msgid-1',
      'msgid-2',
      'msgid-3',
    ]);
    expect(record?.events?.filter((e) => e.type === 'content_part_sent').map((e) => e.detail)).toEqual([
      'part 1/3: msgid msgid-1',
      'part 2/3: msgid msgid-2',
    ]);
  });

  it('names the part a failure stopped at', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_fail', START, splitRequest(2));
    await h.store.create(m.record);
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    h.wecom.script.push(async () => {
      throw new WecomApiError(40003, 'invalid userid', 'message/send');
    });
    await processBatch(h.deps, [m.sqs(lastCopy(h), 1)]);
    const record = h.store.record('msg_fail');
    expect(record?.status).toBe(STATUS.failed);
    expect(record?.error?.message).toMatch(/^part 2\/2: /);
  });

  it('queues the next part without resending this one when only the next copy was missing', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_requeue', START, splitRequest(2));
    await h.store.create(m.record);
    failNextEnqueue(h);

    const first = await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    expect(first.failures).toHaveLength(1);
    expect(h.wecom.sends).toHaveLength(1);

    await processBatch(h.deps, [m.sqs(m.body(), 2)]);
    expect(h.wecom.sends).toHaveLength(1);
    const copy = lastCopy(h);
    expect(copy).toMatchObject({ generation: 1, segment: 1 });
    await processBatch(h.deps, [m.sqs(copy, 1)]);
    expect(h.wecom.sends.map((s) => (s.text as { content: string }).content)).toEqual([
      '(1/2)\npart 1',
      '(2/2)\npart 2',
    ]);
    expect(h.store.record('msg_requeue')?.status).toBe(STATUS.sent);
  });

  it('sends the next part to every recipient, not only those who waited for their slots in the part before', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    await busyMember(h, 'oncall');
    const m = queued('msg_groups', START, splitRequest(2, ['a', 'oncall']));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    const rest = lastCopy(h);
    expect(rest).toMatchObject({ part: { touser: ['oncall'] } });
    clock.advance((rest.part?.reservations?.members?.oncall as number) - clock.now());
    await processBatch(h.deps, [m.sqs(rest, 1)]);
    const next = lastCopy(h);
    expect(next).toMatchObject({ segment: 1 });
    expect(next.part).toBeUndefined();
    while (h.store.record('msg_groups')?.status !== STATUS.sent && h.lanes.enqueued.length < 10) {
      clock.advance(((h.lanes.enqueued.at(-1)?.delaySeconds ?? 0) + 1) * 1000);
      await processBatch(h.deps, [m.sqs(lastCopy(h), 1)]);
    }
    // Each member gets part 1 before part 2, and part 2 goes to both.
    const sent = contentOf(h);
    expect(sent[0]).toBe('a/: (1/2)\npart 1');
    expect(sent[1]).toBe('oncall/: (1/2)\npart 1');
    expect(sent.slice(2).join(' ')).toMatch(
      /a\|oncall\/: \(2\/2\)\npart 2|a\/: \(2\/2\).*oncall\/: \(2\/2\)/,
    );
  });

  it('resends nothing of a redelivered later part that reached some members already', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_redeliver', START, splitRequest(2, ['a', 'b']));
    await h.store.create(m.record);
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    const second = lastCopy(h);
    clock.advance(5_000);
    // Part 2 reached a and b, but the status write failed: SQS hands the copy over again.
    h.store.failTransitionsTo.add(STATUS.sent);
    await processBatch(h.deps, [m.sqs(second, 1)]);
    h.store.failTransitionsTo.clear();
    expect(h.wecom.sends).toHaveLength(2);
    clock.advance(30_000);
    await processBatch(h.deps, [m.sqs(second, 2)]);
    // The redelivery sends part 2 again as the same request (WeCom's duplicate check drops it), never part 1.
    const later = h.wecom.sends.slice(2).map((s) => (s.text as { content: string }).content);
    expect(later.every((c) => c.startsWith('(2/2)'))).toBe(true);
    expect(h.wecom.sends.at(-1)).toMatchObject({ enable_duplicate_check: 1 });
    expect(h.store.record('msg_redeliver')?.status).toBe(STATUS.sent);
  });

  it('does not send a completed part again to a party when only its next copy was missing', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const request = splitRequest(2, ['a']);
    request.recipients.toparty = ['7'];
    const ops = h.deps.config.apps.ops;
    if (!ops) throw new Error('no app ops');
    ops.broadcast = { partySizes: { '7': 3 }, memberShare: 0.25 };
    const m = queued('msg_party', START, request);
    await h.store.create(m.record);
    failNextEnqueue(h);
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    expect(h.wecom.sends).toHaveLength(1);
    clock.advance(30_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);
    expect(h.wecom.sends).toHaveLength(1);
    expect(lastCopy(h)).toMatchObject({ segment: 1 });
  });
});
