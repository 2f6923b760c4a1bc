import { describe, expect, it } from 'vitest';
import { copyWithArrival, stampArrival } from '#local/wecom-sim/arrival.js';
import { memberTimeline } from '#local/wecom-sim/timeline.js';
import type { ReceivedMessage } from '#local/wecom-sim/types.js';

const message = (msgid: string, at: number): ReceivedMessage => ({
  msgid,
  agentId: 1,
  msgtype: 'text',
  payload: { content: msgid },
  receivedAt: at,
  recalled: false,
});

describe('memberTimeline', () => {
  it("merges the member's messages, drops, duplicates and undelivered sends, newest first", () => {
    const tl = memberTimeline({
      userid: 'Alice',
      version: 3,
      inbox: [message('m1', 10), message('m2', 30)],
      drops: [
        { msgid: 'm3', agentId: 1, userId: 'alice', reason: 'member_minute', at: 40 },
        { msgid: 'm3', agentId: 1, userId: 'bob', reason: 'member_minute', at: 40 },
      ],
      duplicates: [
        { at: 20, agentId: 1, msgid: 'm1', originalAt: 10, reading: 'strict', intervalS: 60 },
        { at: 25, agentId: 1, msgid: 'other', originalAt: 5, reading: 'strict', intervalS: 60 },
      ],
      undelivered: [{ agentId: 1, msgtype: 'text', userId: 'alice', reason: 'invaliduser', at: 5 }],
    });

    expect(tl.userid).toBe('alice');
    expect(tl.version).toBe(3);
    expect(tl.items.map((i) => [i.kind, i.at])).toEqual([
      ['drop', 40],
      ['message', 30],
      ['duplicate', 20],
      ['message', 10],
      ['undelivered', 5],
    ]);
  });

  it('orders what happened in one millisecond as it was recorded (the sends of a fast client, a fake clock)', () => {
    // Recorded in this order, all at 7: the message, a later send suppressed as its duplicate, a third one dropped.
    const delivered = stampArrival(message('m1', 7));
    const duplicate = stampArrival({
      at: 7,
      agentId: 1,
      msgid: 'm1',
      originalAt: 7,
      reading: 'strict' as const,
      intervalS: 60,
    });
    const drop = stampArrival({
      msgid: 'm3',
      agentId: 1,
      userId: 'alice',
      reason: 'member_minute' as const,
      at: 7,
    });

    const tl = memberTimeline({
      userid: 'alice',
      version: 1,
      // As the simulator's readers hand them out: copies.
      inbox: [copyWithArrival(delivered)],
      drops: [copyWithArrival(drop)],
      duplicates: [copyWithArrival(duplicate)],
      undelivered: [],
    });

    expect(tl.items.map((i) => i.kind)).toEqual(['drop', 'duplicate', 'message']);
  });
});
