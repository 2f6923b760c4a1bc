import type { AppConfig, BroadcastConfig } from '#lib/config/index.js';
import { ALL_USERS, type AppMessageRequest, foldUserId, type Recipients } from '#lib/messages/index.js';
import type { QuotaDemand } from '#lib/quota/index.js';
import type { BroadcastTarget, Reach } from '#lib/wecom/index.js';
import type { AppQueuedMessage } from './types.js';

/**
 * The recipients this copy sends to: the request's, narrowed to the part's users when the message was split by
 * recipients, and without users an earlier part already reached (a redelivery after a part was recorded).
 */
export function copyRecipients(
  msg: AppQueuedMessage,
  alreadySent: ReadonlySet<string> = new Set(),
): Recipients {
  const { recipients } = msg.request;
  const users = msg.part?.first ?? msg.part?.touser ?? recipients.touser;
  return { ...recipients, touser: users.filter((u) => !alreadySent.has(foldUserId(u))) };
}

/** The parties, tags and `@all` of a send (WeCom ignores toparty and totag next to `@all`). */
export function broadcastTargets(r: Recipients): BroadcastTarget[] {
  if (r.touser.includes(ALL_USERS)) return [{ kind: 'all' }];
  return [
    ...r.toparty.map((id) => ({ kind: 'party' as const, id })),
    ...r.totag.map((id) => ({ kind: 'tag' as const, id })),
  ];
}

/** What the broadcasts of a send cost: members resolved through contacts, or the configured sizes. */
export interface BroadcastSizing {
  /** Case-folded members the resolved broadcasts reach. */
  members: string[];
  /** Person-times of the broadcasts the app may not resolve (their configured sizes). */
  sizedPersonTimes: number;
  /** How many broadcasts were sized from configuration. */
  sized: number;
  /** Broadcasts neither resolved nor configured (`party:2`): the send cannot be counted. */
  unsized: string[];
}

export const NO_BROADCASTS: BroadcastSizing = { members: [], sizedPersonTimes: 0, sized: 0, unsized: [] };

function configuredSize(t: BroadcastTarget, c: BroadcastConfig | undefined): number | undefined {
  if (!c) return undefined;
  const own = t.kind === 'all' ? c.allSize : t.kind === 'party' ? c.partySizes?.[t.id] : c.tagSizes?.[t.id];
  return own ?? c.defaultSize;
}

/** Adds up the reaches of a send's broadcasts (in the order of `targets`). */
export function sizeBroadcasts(
  targets: readonly BroadcastTarget[],
  reaches: readonly Reach[],
  config: BroadcastConfig | undefined,
): BroadcastSizing {
  const members = new Set<string>();
  const out: BroadcastSizing = { members: [], sizedPersonTimes: 0, sized: 0, unsized: [] };
  targets.forEach((t, i) => {
    const reach = reaches[i] as Reach;
    if (reach.status === 'members') {
      for (const m of reach.members) members.add(foldUserId(m));
      return;
    }
    const size = configuredSize(t, config);
    if (size === undefined) out.unsized.push(t.kind === 'all' ? ALL_USERS : `${t.kind}:${t.id}`);
    else {
      out.sizedPersonTimes += size;
      out.sized++;
    }
  });
  out.members = [...members];
  return out;
}

/**
 * What a copy asks of the quota: every member it reaches by name or through a resolved broadcast (case-folded, once
 * each), the configured size of the broadcasts it cannot resolve, and whether it may go in parts. Only a plain list
 * of users may (a broadcast is one send to everyone it reaches), and only when no earlier attempt of this very
 * request may have reached WeCom: its resend must be the same request, or WeCom's duplicate check (strict reading:
 * byte-identical flagged requests) would not drop it for those who already got it.
 */
export function quotaDemand(
  msg: AppQueuedMessage,
  app: AppConfig,
  recipients: Recipients,
  sizing: BroadcastSizing,
): QuotaDemand {
  const direct = recipients.touser.filter((u) => u !== ALL_USERS).map(foldUserId);
  const members = [...new Set([...direct, ...sizing.members])];
  const broadcast = broadcastTargets(recipients).length > 0;
  return {
    app: msg.app,
    quota: app.quota,
    priority: msg.priority,
    members,
    splittable: !broadcast && msg.part?.first === undefined && msg.inDoubt === undefined,
    extraPersonTimes: sizing.sizedPersonTimes,
    broadcasts: sizing.sized > 0 ? 1 : 0,
    broadcastShare: app.broadcast?.memberShare ?? 0,
    ...(msg.part?.reservations ? { held: msg.part.reservations } : {}),
  };
}

/** The request narrowed to the members in this send (case-folded ids back to the client's spelling). */
export function requestFor(
  request: AppMessageRequest,
  recipients: Recipients,
  members: readonly string[],
  splittable: boolean,
): AppMessageRequest {
  if (!splittable) return { ...request, recipients };
  const chosen = new Set(members);
  return {
    ...request,
    recipients: { ...recipients, touser: recipients.touser.filter((u) => chosen.has(foldUserId(u))) },
  };
}
