import { arrivalOf } from './arrival.js';
import type { SuppressedDuplicate } from './duplicates.js';
import type { DroppedMessage, ReceivedMessage, UndeliveredMessage } from './types.js';

/**
 * One member's inbox as the inbox page shows it (`GET /__sim/timeline/<userid>`), newest first: what arrived,
 * and what did not although WeCom answered errcode 0 — silent per-member-limit drops, sends the duplicate check
 * suppressed (of a message this member got), and sends that named the member as invalid or unlicensed.
 */
export type TimelineItem =
  | { kind: 'message'; at: number; message: ReceivedMessage }
  | { kind: 'drop'; at: number; drop: DroppedMessage }
  | { kind: 'duplicate'; at: number; duplicate: SuppressedDuplicate }
  | { kind: 'undelivered'; at: number; undelivered: UndeliveredMessage };

export interface Timeline {
  userid: string;
  /** Changes with every send, recall, card update or reset; the page compares it to skip redraws. */
  version: number;
  items: TimelineItem[];
}

export function memberTimeline(input: {
  userid: string;
  version: number;
  inbox: ReceivedMessage[];
  drops: DroppedMessage[];
  duplicates: SuppressedDuplicate[];
  undelivered: UndeliveredMessage[];
}): Timeline {
  const userid = input.userid.toLowerCase();
  const received = new Set(input.inbox.map((m) => m.msgid));
  const items: TimelineItem[] = [
    ...input.inbox.map((message) => ({ kind: 'message' as const, at: message.receivedAt, message })),
    ...input.drops
      .filter((d) => d.userId === userid)
      .map((drop) => ({ kind: 'drop' as const, at: drop.at, drop })),
    // A suppressed send repeats an earlier one, whose recipients it would have reached again.
    ...input.duplicates
      .filter((d) => received.has(d.msgid))
      .map((duplicate) => ({ kind: 'duplicate' as const, at: duplicate.at, duplicate })),
    ...input.undelivered
      .filter((u) => u.userId === userid)
      .map((undelivered) => ({ kind: 'undelivered' as const, at: undelivered.at, undelivered })),
  ];
  // Items of the same millisecond in the order they were recorded, newest first like the rest.
  items.sort((a, b) => b.at - a.at || arrivalOf(recordOf(b)) - arrivalOf(recordOf(a)));
  return { userid, version: input.version, items };
}

const recordOf = (item: TimelineItem): object => {
  switch (item.kind) {
    case 'message':
      return item.message;
    case 'drop':
      return item.drop;
    case 'duplicate':
      return item.duplicate;
    case 'undelivered':
      return item.undelivered;
  }
};
