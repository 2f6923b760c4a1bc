/**
 * After a load run: did every accepted message arrive, exactly once?
 *
 * The artillery processor records each accepted id with the unique token it put in the message's visible text and
 * its recipients. Reconciliation (1) polls `GET /v1/messages/{id}` until every id is terminal (sent, failed, dead,
 * recalled) or the settle time is up, then, when a WeCom simulator is reachable, (2) reads each recipient's
 * simulator inbox and counts the token there. *Lost* = not terminal in time (or answered 404), or `sent` but
 * missing from an inbox, or its status never readable (every read timed out) and missing from an inbox;
 * *duplicate* = a token more than once in one inbox; *unexpected* = a token of this run in an inbox that no accepted
 * id owns (a rejected request that was delivered anyway, or a 409'd body). Against a deployed stack only (1) is
 * possible: WeCom's inboxes cannot be read, so duplicates are not visible there.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mapLimit, percentile, sleep } from '../../bench/lib/harness.js';

export interface AcceptedRecord {
  id: string;
  token: string;
  to: string[];
  priority: string;
  /** Client clock when the 202/207 arrived, epoch ms. */
  at: number;
  via: 'single' | 'batch';
}

interface ReplayRecord {
  replayOf: string;
  id?: string;
  status: number;
}

const TERMINAL = new Set(['sent', 'failed', 'dead', 'expired', 'recalled']);
const STATUS_CONCURRENCY = 16;

export interface RunRecords {
  accepted: AcceptedRecord[];
  replays: ReplayRecord[];
  /** Tokens of every valid message sent, before its answer. */
  sent: Set<string>;
  /** Tokens whose request was answered with anything but acceptance (4xx/5xx, a batch item error). */
  refused: Set<string>;
}

export async function readRecords(dir: string): Promise<RunRecords> {
  const out: RunRecords = { accepted: [], replays: [], sent: new Set(), refused: new Set() };
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.jsonl'));
  for (const f of files) {
    for (const line of (await readFile(join(dir, f), 'utf8')).split('\n')) {
      if (!line.trim()) continue;
      const r = JSON.parse(line) as AcceptedRecord | ReplayRecord | { sent: string } | { refused: string };
      if ('replayOf' in r) out.replays.push(r);
      else if ('sent' in r) out.sent.add(r.sent);
      else if ('refused' in r) out.refused.add(r.refused);
      else out.accepted.push(r);
    }
  }
  return out;
}

export interface StatusView {
  status: string;
  created_at: string;
  sent_at?: string | null;
  error?: { code?: string } | null;
}

/** What a status read gave: the record, a 404, or no answer at all (timeouts, 429/5xx: read again later). */
type StatusRead = StatusView | 'not_found' | 'unreadable';

/**
 * Polls statuses until all are terminal or `settleMs` passed; returns the last status seen per id (undefined:
 * never readable, e.g. every read timed out on an overloaded machine; 'not_found': the gateway answered 404).
 */
export async function settleStatuses(
  api: { origin: string; apiKey: string },
  ids: string[],
  settleMs: number,
  say: (line: string) => void,
): Promise<{ statuses: Map<string, StatusView | 'not_found' | undefined>; waitedMs: number }> {
  const statuses = new Map<string, StatusView | 'not_found' | undefined>();
  const started = Date.now();
  let open = ids;
  for (let round = 0; ; round++) {
    const seen = await mapLimit(open, STATUS_CONCURRENCY, (id) => getStatus(api, id));
    open.forEach((id, i) => {
      const read = seen[i] as StatusRead;
      // An unreadable answer never overwrites what an earlier round read.
      if (read !== 'unreadable') statuses.set(id, read);
      else if (!statuses.has(id)) statuses.set(id, undefined);
    });
    open = open.filter((id) => {
      const s = statuses.get(id);
      return s === undefined || (s !== 'not_found' && !TERMINAL.has(s.status));
    });
    const waited = Date.now() - started;
    if (open.length === 0 || waited >= settleMs) return { statuses, waitedMs: waited };
    if (round % 5 === 0)
      say(`reconcile: ${open.length} of ${ids.length} not terminal yet (${Math.round(waited / 1000)} s)`);
    await sleep(1_000);
  }
}

async function getStatus(api: { origin: string; apiKey: string }, id: string): Promise<StatusRead> {
  try {
    const res = await fetch(`${api.origin}/v1/messages/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${api.apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    if (res.status === 200) return (await res.json()) as StatusView;
    await res.body?.cancel();
    return res.status === 404 ? 'not_found' : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

export interface InboxFinding {
  /** token → recipient → receivedAt of each copy. */
  copies: Map<string, Map<string, number[]>>;
  members: number;
}

/** Reads the simulator inbox of every recipient and indexes this run's tokens found there. */
export async function readInboxes(simUrl: string, members: string[], runId: string): Promise<InboxFinding> {
  const tokenPattern = new RegExp(`lt-${runId}-[0-9a-z]+-\\d+`, 'g');
  const copies = new Map<string, Map<string, number[]>>();
  await mapLimit(members, STATUS_CONCURRENCY, async (member) => {
    const res = await fetch(`${simUrl}/__sim/inbox/${encodeURIComponent(member)}`);
    const inbox = (await res.json()) as { payload: unknown; receivedAt: number }[];
    for (const m of inbox) {
      // One token per message; a set so a token repeated inside one message counts once.
      for (const token of new Set(JSON.stringify(m.payload).match(tokenPattern) ?? [])) {
        const byMember = copies.get(token) ?? new Map<string, number[]>();
        copies.set(token, byMember);
        byMember.set(member, [...(byMember.get(member) ?? []), m.receivedAt]);
      }
    }
  });
  return { copies, members: members.length };
}

export interface Reconciliation {
  accepted: number;
  byStatus: Record<string, number>;
  notTerminal: string[];
  /** No status read got an answer (client timeouts on an overloaded machine): judged by the inboxes alone. */
  unread: string[];
  /** sent, but missing from a recipient's inbox (local only). */
  missing: string[];
  duplicates: string[];
  unexpectedTokens: string[];
  /**
   * Sent, but the client never saw an answer (its timeout): the gateway may or may not have accepted them, so they
   * may arrive at most once — neither lost nor unexpected.
   */
  unanswered: { total: number; delivered: number; duplicated: number };
  replays: { total: number; sameId: number; mismatched: number };
  lost: number;
  /** Accepted (gateway `created_at`) → simulator `receivedAt`, first copy per recipient, ms; local only. */
  deliveryMs: number[];
  /** Accepted → status `sent_at`, ms: the gateway's own view, also against a deployed stack. */
  sentMs: number[];
  /** For the chart: acceptance time (epoch ms) and delivery latency of each delivered copy. */
  samples: { at: number; ms: number }[];
  settleWaitMs: number;
}

export function reconcile(
  { accepted, replays, sent, refused }: RunRecords,
  statuses: Map<string, StatusView | 'not_found' | undefined>,
  inboxes: InboxFinding | undefined,
  settleWaitMs: number,
): Reconciliation {
  const byStatus: Record<string, number> = {};
  const notTerminal: string[] = [];
  const unread: string[] = [];
  const missing: string[] = [];
  const duplicates: string[] = [];
  const deliveryMs: number[] = [];
  const sentMs: number[] = [];
  const samples: { at: number; ms: number }[] = [];
  for (const r of accepted) {
    const read = statuses.get(r.id);
    const s = typeof read === 'object' ? read : undefined;
    // 'not_found': the gateway 404s an id it accepted (a bug); 'unread': no status read ever got an answer.
    const status = s?.status ?? (read === 'not_found' ? 'not_found' : 'unread');
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status === 'unread') unread.push(r.id);
    else if (!TERMINAL.has(status)) notTerminal.push(r.id);
    const createdAt = s ? Date.parse(s.created_at) : r.at;
    if (s?.sent_at) sentMs.push(Date.parse(s.sent_at) - createdAt);
    if (!inboxes) continue;
    const copies = inboxes.copies.get(r.token);
    for (const member of r.to) {
      const times = copies?.get(member) ?? [];
      if (times.length > 1) duplicates.push(r.id);
      if (times.length === 0 && (status === 'sent' || status === 'unread')) missing.push(r.id);
      const first = times.length > 0 ? Math.min(...times) : undefined;
      if (first !== undefined) {
        deliveryMs.push(first - createdAt);
        samples.push({ at: createdAt, ms: first - createdAt });
      }
    }
  }
  const owned = new Set(accepted.map((r) => r.token));
  const unanswered = [...sent].filter((t) => !owned.has(t) && !refused.has(t));
  const unansweredSet = new Set(unanswered);
  const unexpectedTokens = inboxes
    ? [...inboxes.copies.keys()].filter((t) => !owned.has(t) && !unansweredSet.has(t))
    : [];
  const copiesOf = (t: string) => [...(inboxes?.copies.get(t)?.values() ?? [])];
  const unansweredDelivered = unanswered.filter((t) => copiesOf(t).length > 0);
  const unansweredDuplicated = unanswered.filter((t) => copiesOf(t).some((times) => times.length > 1));
  const sameId = replays.filter((r) => r.status === 202 && r.id === r.replayOf).length;
  const uniqueMissing = [...new Set(missing)];
  return {
    accepted: accepted.length,
    byStatus,
    notTerminal,
    unread,
    missing: uniqueMissing,
    duplicates: [...new Set([...duplicates, ...unansweredDuplicated])],
    unexpectedTokens,
    unanswered: {
      total: unanswered.length,
      delivered: unansweredDelivered.length,
      duplicated: unansweredDuplicated.length,
    },
    replays: { total: replays.length, sameId, mismatched: replays.length - sameId },
    // Without inboxes (a deployed WeCom) an unread status cannot be told from a lost message.
    lost: new Set([...notTerminal, ...uniqueMissing, ...(inboxes ? [] : unread)]).size,
    deliveryMs,
    sentMs,
    samples,
    settleWaitMs,
  };
}

export function latencySummary(values: number[]) {
  const r = (p: number) => Math.round(percentile(values, p));
  return { n: values.length, p50: r(50), p90: r(90), p95: r(95), p99: r(99), max: r(100) };
}
