import type { QuotaConfig } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';

// What the sender asks of the quota guard (lib/sender/quota.ts) for one send, and what it answers.

export type QuotaScope =
  | 'member-minute'
  | 'member-hour'
  | 'broadcast-minute'
  | 'broadcast-hour'
  | 'app-minute'
  | 'app-hour'
  | 'app-day';

/** Key of the app's shared broadcast allowance among a copy's held slots (userids cannot start with `~`). */
export const BROADCAST_SLOT = '~broadcast';

/**
 * Prefix of the key of an app call (with its person-times) among a copy's held slots: `~app:<person-times>`. A copy
 * the app's calls are taken for beyond the inline wait holds its call, as it holds its members' slots.
 */
export const APP_CALL_SLOT = '~app:';

export interface QuotaDemand {
  app: string;
  quota: QuotaConfig;
  priority: Priority;
  /** Members charged one by one, case-folded: the users named, and the members of resolved broadcasts. */
  members: readonly string[];
  /** A list of users may go in parts (those with a slot now, the rest later); a broadcast goes to all at once. */
  splittable: boolean;
  /** Person-times beyond `members`: broadcasts of configured size. */
  extraPersonTimes: number;
  /** Broadcasts of configured size: units of the app's shared broadcast allowance. */
  broadcasts: number;
  /** Share of every member's allowance kept for broadcasts of configured size (the app's `broadcast`), else 0. */
  broadcastShare: number;
  /** Slots this copy already holds (member or {@link BROADCAST_SLOT} → epoch ms), from its deferral. */
  held?: Readonly<Record<string, number>>;
}

export type QuotaDecision =
  | {
      ok: true;
      /** When the send may go (epoch ms): `acquire` resolves then; `reserve` leaves the wait to the caller. */
      sendAtMs: number;
      /** Members in this send (case-folded). */
      members: readonly string[];
      /** Members whose slots come later: a part of their own, waking at `wakeAtMs` with the slots held. */
      rest?: { members: string[]; held: Record<string, number>; wakeAtMs: number };
    }
  | {
      ok: false;
      scope: QuotaScope;
      /** When to try again (epoch ms); Infinity when no window could ever hold the message. */
      retryAtMs: number;
      /** Slots reserved for the retry: the copy waits for them exactly. */
      held?: Record<string, number>;
    };
