import { fromLegacyHeld, type HeldReservations } from '#lib/quota/held.js';
import type { InDoubt, MessageRecord, RecordOrigin } from './record.js';

/**
 * The SQS message body: everything the sender needs, so a first delivery needs no DynamoDB read. Messages stay
 * queued up to 14 days (the lanes' retention), so a body written by an older version must still decode: add
 * optional fields freely; anything incompatible needs a new `v`, and {@link decodeQueuedMessage} must keep
 * reading the old one until the queues have drained.
 */
export type QueuedMessage = RecordOrigin & QueuedFields;

/** A queue body's fields besides its origin. */
export interface QueuedFields {
  v: 1;
  /** Deferral generation of this copy (see MessageRecord.generation). */
  generation: number;
  /** Carried by deferred copies: an attempt before the deferral was in doubt (see MessageRecord). */
  inDoubt?: InDoubt;
  /**
   * Carried by copies made for a retry: failed attempts before this copy. The retry backoff keeps growing across
   * copies, which reset SQS's receive count (absent: none).
   */
  priorFailures?: number;
  /**
   * Carried by copies an operator redrove from a dead-letter queue (lib/ops): the delivery budget counts from here,
   * so a message that died waiting gets a whole budget again; its own `ttl_seconds` still counts from `createdAt`.
   */
  redrivenAt?: string;
  /** A deferred copy that sends to some of the recipients, or waits for quota slots reserved for it. */
  part?: QueuedPart;
  /** Not to be sent before this (epoch ms): a wait longer than SQS's longest delay (15 min) takes several hops. */
  notBeforeMs?: number;
  /**
   * Which part of split content this copy sends (0-based index into `request.segments`); absent: the first. The
   * next part gets a copy of its own once this one reached every recipient, so each member sees them in order.
   */
  segment?: number;
}

/**
 * What a deferred copy carries about its quota: whom it sends to when a message was split by recipients (some had a
 * slot at once, the others wait for theirs), and the slots reserved for it, so that it waits for them exactly once.
 */
export interface QueuedPart {
  /** The users this copy sends to, as the client spelled them: a subset of `request.recipients.touser`. */
  touser?: string[];
  /**
   * Send exactly these first, in one send, then the rest of `touser`: an attempt at this part may have reached
   * WeCom, so its retry must be the same request (WeCom's duplicate check compares request bodies).
   */
  first?: string[];
  /** The quota reservations this copy holds: it wakes for the earliest and uses them once (docs/quota.md). */
  reservations?: HeldReservations;
}

/**
 * What a release timer puts in a lane when a message scheduled far ahead is nearly due: its id only (a timer's input
 * is small, and the record holds the message). The sender reads the record and queues the message's copy with the
 * delay left (lib/sender `release`). A version without scheduling drops it as unreadable; it has no scheduled
 * messages either.
 */
export interface ReleaseNotice {
  v: 1;
  release: { id: string };
}

export const encodeReleaseNotice = (id: string): string => JSON.stringify({ v: 1, release: { id } });

/** The release notice in a lane body, or undefined when the body is something else. */
export function decodeReleaseNotice(body: string): ReleaseNotice | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<ReleaseNotice> | null;
    return parsed?.v === 1 && typeof parsed.release?.id === 'string' ? (parsed as ReleaseNotice) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The body that queues a freshly stored record. A scheduled one carries its schedule and is not to be sent before
 * its release (`notBeforeMs`).
 */
export const toQueuedMessage = (r: MessageRecord): QueuedMessage => ({
  v: 1,
  id: r.id,
  ...(r.robot !== undefined ? { robot: r.robot } : { app: r.app }),
  priority: r.priority,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  apiKey: r.apiKey,
  request: r.request,
  generation: r.generation,
  ...(r.duplicateCheckSeconds !== undefined ? { duplicateCheckSeconds: r.duplicateCheckSeconds } : {}),
  ...(r.schedule ? { schedule: r.schedule, notBeforeMs: Date.parse(r.schedule.releaseAt) } : {}),
});

/**
 * The in-doubt marker as it travels: under the names older versions read, because a version rolled back to reads
 * the bodies a newer one queued (for up to 14 days). Bodies from before `mayHaveReachedAt` carry the flag alone.
 */
interface WireInDoubt {
  mayHaveReachedWecom?: true;
  mayHaveReachedAt?: string;
}

/** The SQS `MessageBody` of a queued message. */
export function encodeQueuedMessage(m: QueuedMessage): string {
  const { inDoubt, ...rest } = m;
  const wire: WireInDoubt = inDoubt ? { mayHaveReachedWecom: true, mayHaveReachedAt: inDoubt.since } : {};
  return JSON.stringify({ ...rest, ...wire });
}

/** The queued message in an SQS body; undefined for a body of an unknown version or shape (it is dropped). */
export function decodeQueuedMessage(body: string): QueuedMessage | undefined {
  let parsed: (QueuedMessage & WireInDoubt & { part?: { held?: Record<string, unknown> } }) | null;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed?.v !== 1 || typeof parsed.id !== 'string' || !parsed.request) return undefined;
  if (typeof parsed.app !== 'string' && typeof parsed.robot !== 'string') return undefined;
  const { mayHaveReachedWecom, mayHaveReachedAt, ...decoded } = parsed;
  const m = decoded.part?.held ? { ...decoded, part: withLegacyHeld(decoded.part) } : decoded;
  // A flag without its time: in doubt since acceptance, the earliest an attempt can have started.
  return mayHaveReachedWecom ? { ...m, inDoubt: { since: mayHaveReachedAt ?? m.createdAt } } : m;
}

/** A part of a body queued before `reservations`, which carried its held slots as one map in `held`. */
function withLegacyHeld({ held, ...part }: QueuedPart & { held?: Record<string, unknown> }): QueuedPart {
  const reservations = part.reservations ?? (held ? fromLegacyHeld(held) : undefined);
  return { ...part, ...(reservations ? { reservations } : {}) };
}
