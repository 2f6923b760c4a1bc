import type { QuotaConfig } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';
import type { HeldReservations } from './held.js';

// What the sender asks of the quota guard for one send, and what it is answered (docs/quota.md).

/** Which window set a wait (the deferral's reason). */
export type QuotaScope =
  | 'member-minute'
  | 'member-hour'
  | 'broadcast-minute'
  | 'broadcast-hour'
  | 'app-minute'
  | 'app-hour'
  | 'app-day';

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
  /** What this copy holds from its deferral. */
  held?: HeldReservations;
}

/** The members a send leaves for a part of their own, holding their slots. */
export interface QuotaRest {
  members: string[];
  held: HeldReservations;
  /** When the part wakes: its earliest held slot. */
  wakeAtMs: number;
}

/** Send now: at `sendAtMs`, to `members`; the `rest` later, in a part of its own. */
export interface SendDecision {
  kind: 'send';
  /** When the send may go (epoch ms): `acquire` resolves then; `reserve` leaves the wait to the caller. */
  sendAtMs: number;
  /** Members in this send (case-folded). */
  members: readonly string[];
  /**
   * Each member's slot (case-folded member → epoch ms): the send goes at the latest of them or up to the lateness
   * after one, never before.
   */
  slots: Readonly<Record<string, number>>;
  rest?: QuotaRest;
}

/** Not now: try again at `retryAtMs`, holding `held` (and waking for it exactly) when there is any. */
export interface WaitDecision {
  kind: 'wait';
  scope: QuotaScope;
  retryAtMs: number;
  held?: HeldReservations;
}

/** Never: no window of `scope` could ever hold the message. */
export interface NeverDecision {
  kind: 'never';
  scope: QuotaScope;
}

export type QuotaDecision = SendDecision | WaitDecision | NeverDecision;

/** What a step of the decision answers: granted (with what it found), or a wait or never that ends the decision. */
export type Step<T> = ({ kind: 'granted' } & T) | WaitDecision | NeverDecision;

/** What became of a send the guard allowed, as the sender reports it. */
export type SendOutcome =
  /** WeCom accepted it. */
  | 'sent'
  /** WeCom answered an error, or the request never left: nobody got it. */
  | 'not-sent'
  /** It may have reached WeCom (no answer): the members may have it. */
  | 'in-doubt';
