import type { ApiKeyConfig } from '#lib/config/index.js';
import { changes, STATUS } from '#lib/model/index.js';
import type { IdempotencyEntry } from '#lib/store/index.js';
import { ENQUEUE_FAILED } from './accept.js';
import { RetryLaterError } from './errors.js';
import { idTime } from './ids.js';
import type { Accepted, IngestDeps } from './types.js';

/** SPEC §2: ≤128 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;
/**
 * How long after its id was made a request may still be storing and enqueueing its message: past ingest's 10 s
 * Lambda timeout. An unaccepted claim older than this belongs to a request that has ended.
 */
const CLAIM_IN_FLIGHT_MS = 15_000;
/** How long a replay waits for the first request (still in flight) to finish. */
const REPLAY_WAIT_MS = 3_000;

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
export async function replayClaim(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  keyHash: string,
  first: IdempotencyEntry,
): Promise<Accepted | undefined> {
  // Real time, not deps.now: ids carry the real clock.
  const waitUntil = Date.now() + REPLAY_WAIT_MS;
  const release = async () => {
    await deps.idempotency.release(apiKey.name, keyHash, first.messageId);
    deps.logger.warn('released the Idempotency-Key of a request answered 503', {
      messageId: first.messageId,
    });
    return undefined;
  };
  let entry: IdempotencyEntry | undefined = first;
  for (;;) {
    if (!entry || entry.messageId !== first.messageId) return undefined;
    if (entry.accepted) return { id: first.messageId, status: 'queued' };
    const record = await deps.messages.get(first.messageId);
    if (record?.error?.code === ENQUEUE_FAILED) return release();
    const madeAt = idTime(first.messageId);
    if (madeAt !== undefined && Date.now() - madeAt > CLAIM_IN_FLIGHT_MS) {
      if (record && record.status !== STATUS.queued) return { id: first.messageId, status: 'queued' };
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
    entry = await deps.idempotency.read(apiKey.name, keyHash);
  }
}

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
