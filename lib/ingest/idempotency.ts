import type { MessageRequest } from '#lib/messages/index.js';
import { changes, STATUS } from '#lib/model/index.js';
import type { AcceptedSchedule, IdempotencyEntry } from '#lib/store/index.js';
import { ENQUEUE_FAILED } from './accept.js';
import { sha256Hex } from './auth.js';
import { InvalidRequestError, RetryLaterError, StateConflictError } from './errors.js';
import { idTime } from './ids.js';
import type { Accepted, IngestDeps, Principal } from './types.js';

/** SPEC §2: ≤128 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;
/**
 * How long after its id was made a request may still be storing and enqueueing its message: past ingest's 10 s
 * Lambda timeout. An unaccepted claim older than this belongs to a request that has ended.
 */
const CLAIM_IN_FLIGHT_MS = 15_000;
/** How long a replay waits for the first request (still in flight) to finish. */
const REPLAY_WAIT_MS = 3_000;

/** SPEC §2: an Idempotency-Key header is 1–128 visible ASCII characters. */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key === undefined || IDEMPOTENCY_KEY.test(key)) return;
  throw new InvalidRequestError(
    'invalid_idempotency_key',
    'Idempotency-Key must be 1-128 visible ASCII characters',
    [{ field: 'Idempotency-Key', message: `${key.length} characters, allowed 1-128 of 0x21-0x7e` }],
  );
}

/**
 * Claims the Idempotency-Key for this request (message id `id`): its hash once claimed, or the first request's
 * answer when this is a replay. The body is compared in its normalized form, not as raw bytes: key order, `a|b`
 * vs ["a","b"] and defaults do not matter. A string `sameRequest` is compared instead of the body (a hook's
 * delivery key: every retry of one delivery is the same request).
 */
export async function claimKey(
  deps: IngestDeps,
  principal: Principal,
  key: string,
  sameRequest: MessageRequest | string,
  id: string,
): Promise<{ keyHash: string } | { replay: Accepted }> {
  const keyHash = sha256Hex(key);
  const bodyHash = sha256Hex(typeof sameRequest === 'string' ? sameRequest : canonicalJson(sameRequest));
  const ttlMs = deps.config.idempotencyHours * 3600_000;
  for (let attempt = 0; ; attempt++) {
    const claim = await deps.idempotency.claim(principal.name, keyHash, { bodyHash, messageId: id }, ttlMs);
    if (claim.claimed) return { keyHash };
    if (claim.existing.bodyHash !== bodyHash) {
      throw new StateConflictError(
        'idempotency_conflict',
        'this Idempotency-Key was already used with a different body; use a new key for a new message',
      );
    }
    const replay = await replayClaim(deps, principal, keyHash, claim.existing);
    if (replay) return { replay };
    // The claim was left by a request that never stored its message (and could not release the key, e.g.
    // DynamoDB was down): released now, so claim the key for this request. Once more at most.
    if (attempt > 0) throw new RetryLaterError('could not take over a stale Idempotency-Key; retry');
  }
}

/**
 * Lets replays answer at once. If this write fails the message is queued all the same; a replay then waits for
 * the first request to end and finds the record.
 */
export async function markKeyAccepted(
  deps: IngestDeps,
  principal: Principal,
  keyHash: string,
  accepted: Accepted,
): Promise<void> {
  const { id } = accepted;
  const schedule =
    accepted.send_at !== undefined && accepted.release_at !== undefined
      ? { dueAt: accepted.send_at, releaseAt: accepted.release_at }
      : undefined;
  await deps.idempotency.markAccepted(principal.name, keyHash, id, schedule).catch((err: unknown) => {
    deps.logger.error('could not mark the Idempotency-Key accepted', { err, messageId: id });
  });
}

/** Frees the key of a request that failed, so its retry can claim it. Best effort: a stale claim is taken over. */
export async function releaseKey(
  deps: IngestDeps,
  principal: Principal,
  keyHash: string,
  id: string,
): Promise<void> {
  await deps.idempotency.release(principal.name, keyHash, id).catch((releaseErr: unknown) => {
    deps.logger.error('could not release idempotency key', { err: releaseErr, messageId: id });
  });
}

/**
 * The answer to a replayed Idempotency-Key: the first request's message id once that request was accepted.
 * Undefined when the key is free for this request: released meanwhile, or left by a first request that was
 * answered 503 and could not release it (e.g. DynamoDB was down) — released here.
 *
 * - claim marked accepted (message stored and enqueued) → the first id, without reading the record;
 * - record failed with `enqueue_failed` → the first request was answered 503: take the key over;
 * - first request ended (the id is older than {@link CLAIM_IN_FLIGHT_MS}) → its record decides: the sender has
 *   worked on it (any status but `queued`) → it was queued: the first id; never stored, or still `queued` → most
 *   likely a write applied while its answer was lost, then a 503: take the key over (the stray record is failed);
 * - first request may still be running → wait for it, at most {@link REPLAY_WAIT_MS}, then 503 (retry).
 */
async function replayClaim(
  deps: IngestDeps,
  principal: Principal,
  keyHash: string,
  first: IdempotencyEntry,
): Promise<Accepted | undefined> {
  // Real time, not deps.now: ids carry the real clock.
  const waitUntil = Date.now() + REPLAY_WAIT_MS;
  const release = async () => {
    await deps.idempotency.release(principal.name, keyHash, first.messageId);
    deps.logger.warn('released the Idempotency-Key of a request answered 503', {
      messageId: first.messageId,
    });
    return undefined;
  };
  let entry: IdempotencyEntry | undefined = first;
  for (;;) {
    if (!entry || entry.messageId !== first.messageId) return undefined;
    if (entry.accepted) return acceptedAs(first.messageId, entry);
    const record = await deps.messages.get(first.messageId);
    if (record?.error?.code === ENQUEUE_FAILED) return release();
    const madeAt = idTime(first.messageId);
    if (madeAt !== undefined && Date.now() - madeAt > CLAIM_IN_FLIGHT_MS) {
      if (record && record.status !== STATUS.queued && record.status !== STATUS.scheduled)
        return acceptedAs(first.messageId, record);
      if (record) {
        await deps.messages.transition(
          first.messageId,
          changes.withdraw(new Date(Date.now()).toISOString(), 'superseded'),
        );
      }
      return release();
    }
    if (Date.now() >= waitUntil) {
      throw new RetryLaterError('a request with this Idempotency-Key is still in progress; retry');
    }
    await new Promise((r) => setTimeout(r, 100));
    entry = await deps.idempotency.read(principal.name, keyHash);
  }
}

/** The first answer again: `scheduled` with its times for a message accepted for later. */
const acceptedAs = (id: string, record: { schedule?: AcceptedSchedule } | undefined): Accepted =>
  record?.schedule
    ? { id, status: 'scheduled', send_at: record.schedule.dueAt, release_at: record.schedule.releaseAt }
    : { id, status: 'queued' };

/** JSON with sorted object keys: the same body with keys in another order hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
