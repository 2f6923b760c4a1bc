import { copyWithArrival, stampArrival } from './arrival.js';
import { ALL_MEMBERS_INBOX } from './directory.js';
import type { DroppedMessage, ReceivedMessage, UndeliveredMessage } from './types.js';

const DROPS_LIMIT = 100_000;

/** What each member received, and what WeCom dropped silently. Userids are folded to lower case, as in WeCom. */
export class Inboxes {
  readonly #limit: number;
  #inboxes = new Map<string, ReceivedMessage[]>();
  #drops: DroppedMessage[] = [];
  #undelivered: UndeliveredMessage[] = [];

  /** @param limit most recent messages kept per member inbox (older ones are forgotten). */
  constructor(limit: number) {
    this.#limit = limit;
  }

  put(user: string, entry: ReceivedMessage): void {
    const key = fold(user);
    let inbox = this.#inboxes.get(key);
    if (inbox === undefined) {
      inbox = [];
      this.#inboxes.set(key, inbox);
    }
    inbox.push(stampArrival(entry));
    // Trim in bulk so the cost stays amortised O(1) per delivery.
    if (inbox.length > 2 * this.#limit) inbox.splice(0, inbox.length - this.#limit);
  }

  drop(d: DroppedMessage): void {
    this.#drops.push(stampArrival({ ...d, userId: fold(d.userId) }));
    if (this.#drops.length > 2 * DROPS_LIMIT) this.#drops.splice(0, this.#drops.length - DROPS_LIMIT);
  }

  undeliver(u: UndeliveredMessage): void {
    this.#undelivered.push(stampArrival({ ...u, userId: fold(u.userId) }));
    if (this.#undelivered.length > 2 * DROPS_LIMIT)
      this.#undelivered.splice(0, this.#undelivered.length - DROPS_LIMIT);
  }

  /** Members with an inbox, with how many messages each holds and when the newest arrived. */
  members(): { userid: string; messages: number; lastAt: number | null }[] {
    return [...this.#inboxes].map(([userid, inbox]) => ({
      userid,
      messages: Math.min(inbox.length, this.#limit),
      lastAt: inbox.at(-1)?.receivedAt ?? null,
    }));
  }

  list(user: string): ReceivedMessage[] {
    const inbox = this.#inboxes.get(fold(user)) ?? [];
    return inbox.slice(-this.#limit).map(copyWithArrival);
  }

  drops(): DroppedMessage[] {
    return this.#drops.slice(-DROPS_LIMIT).map(copyWithArrival);
  }

  undelivered(): UndeliveredMessage[] {
    return this.#undelivered.slice(-DROPS_LIMIT).map(copyWithArrival);
  }

  clear(): void {
    this.#inboxes = new Map();
    this.#drops = [];
    this.#undelivered = [];
  }
}

const fold = (user: string): string => (user === ALL_MEMBERS_INBOX ? user : user.toLowerCase());
