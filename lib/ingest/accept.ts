import { type AppConfig, DELIVERY_DEFAULTS } from '#lib/config/index.js';
import { type AppMessageRequest, type MessageRequest, withTaskId } from '#lib/messages/index.js';
import {
  changes,
  type MessageRecord,
  newRecord,
  toQueuedMessage,
  type WithdrawReason,
} from '#lib/model/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/message-queue.js';
import { LANES } from '#lib/resources/index.js';
import { StoreRejectedError } from '#lib/store/errors.js';
import { MessageTooLargeError, RetryLaterError } from './errors.js';
import { expiresAtOf, releaseVia, scheduleOf, scheduleView } from './schedule.js';
import { assertStorable, largestField } from './size.js';
import type { Accepted, IngestDeps, Principal } from './types.js';

/** The error code of a record whose enqueue failed (the client was answered 503). */
export const ENQUEUE_FAILED = 'enqueue_failed' satisfies WithdrawReason;

/**
 * What became of one record's write: stored; not stored (503, retry); or refused for good by DynamoDB — too large
 * (413), or another ValidationException, which is the gateway's bug (500), never "unavailable, retry".
 */
type Stored = true | false | Error;

function rejection(err: StoreRejectedError, record: MessageRecord): Error {
  if (!err.tooLarge) return err;
  // The size check let it through (it errs safe, so this is rare): the same 413.
  const largest = largestField(record.request);
  return new MessageTooLargeError('the message is too large to store', [
    { field: largest.field, message: `${largest.bytes} bytes; make it smaller` },
  ]);
}

/** One record by PutItem: a fresh id, so `exists` means an earlier write of ours whose answer was lost. */
function createOne(deps: IngestDeps, r: MessageRecord): Promise<Stored> {
  return deps.messages.create(r).then(
    () => true,
    (err: unknown) => {
      deps.logger.error('could not store message record', { err, messageId: r.id });
      return err instanceof StoreRejectedError ? rejection(err, r) : false;
    },
  );
}

/** Writes the new records; at each index whether it was stored. */
async function storeRecords(
  deps: IngestDeps,
  records: MessageRecord[],
  mode: 'single' | 'batch',
): Promise<Stored[]> {
  if (mode === 'single') return Promise.all(records.map((r) => createOne(deps, r)));
  const { unwritten, tooLarge } = await deps.messages.createBatch(records).catch((err: unknown) => {
    deps.logger.error('could not store message records', { err, count: records.length });
    return { unwritten: records.map((r) => r.id), tooLarge: [] as string[] };
  });
  const notWritten = new Set(unwritten);
  const refused = new Set(tooLarge);
  for (const id of notWritten) deps.logger.error('could not store message record', { messageId: id });
  // "Not written" may still have been written (a request that timed out after DynamoDB applied it): such a
  // record must not stay `queued` with no queue message behind it. Best effort; a missing record is fine.
  await Promise.all(
    records
      .filter((r) => notWritten.has(r.id) && !refused.has(r.id))
      .map((r) =>
        deps.messages.transition(r.id, changes.withdraw(r.createdAt, 'store_failed')).catch(() => false),
      ),
  );
  return records.map((r) =>
    refused.has(r.id)
      ? rejection(
          new StoreRejectedError({ cause: new Error('Item size has exceeded the maximum allowed size') }),
          r,
        )
      : !notWritten.has(r.id),
  );
}

/**
 * The duplicate_check_interval every attempt of the message will carry, fixed now so that all attempts are the same
 * request (lib/messages `toWecomSendBody`): the client's own when it asked for the check, 0 when it opted out,
 * else the app's `delivery.duplicateCheckSeconds`.
 */
export function duplicateCheckSecondsFor(req: AppMessageRequest, app: AppConfig | undefined): number {
  if (req.duplicateProtection === false) return 0;
  if (req.options.enable_duplicate_check === 1) return req.options.duplicate_check_interval ?? 1800;
  return app?.delivery?.duplicateCheckSeconds ?? DELIVERY_DEFAULTS.duplicateCheckSeconds;
}

/**
 * Stores the records of validated requests, then queues them in their priority lanes. At the index of each message
 * that was not accepted: the error to answer (413 too large; 503 when it could not be stored or queued, and then its
 * record is never left `queued`).
 */
export async function acceptAll(
  deps: IngestDeps,
  principal: Principal,
  items: { id: string; req: MessageRequest }[],
  mode: 'single' | 'batch',
): Promise<(Accepted | Error)[]> {
  const now = (deps.now ?? Date.now)();
  const createdAt = new Date(now).toISOString();
  const records = items.map(({ id, req }) => {
    if (req.robot !== undefined) {
      // A robot has no duplicate check, no card callbacks and no quiet hours: its request is stored as validated.
      return newRecord({
        robot: req.robot,
        id,
        priority: req.priority,
        request: req,
        apiKey: principal.name,
        createdAt,
        expiresAt: expiresAtOf(undefined, now, deps.config.retentionDays),
      });
    }
    const app = deps.config.apps[req.app];
    const schedule = scheduleOf(app, req, id, now);
    return newRecord({
      id,
      app: req.app,
      priority: req.priority,
      // A card that calls back gets its task_id now (after any Idempotency-Key hash, which is of the client's body).
      request: withTaskId(req, id),
      apiKey: principal.name,
      createdAt,
      expiresAt: expiresAtOf(schedule, now, deps.config.retentionDays),
      duplicateCheckSeconds: duplicateCheckSecondsFor(req, app),
      ...(schedule ? { schedule } : {}),
    });
  });
  // 0. Too large to store or queue: 413 naming the field, before anything is written.
  const refused = new Map<string, Error>();
  for (const r of records) {
    try {
      assertStorable(r, toQueuedMessage(r));
    } catch (err) {
      refused.set(r.id, err as Error);
    }
  }
  const storable = records.filter((r) => !refused.has(r.id));
  // 1. Records first (a status query must never 404 for an id we return): one conditional PutItem for a single
  // message, BatchWriteItem (25 per request) for a batch.
  const outcomes = storable.length > 0 ? await storeRecords(deps, storable, mode) : [];
  storable.forEach((r, i) => {
    const o = outcomes[i];
    if (o !== true && o !== false && o !== undefined) refused.set(r.id, o);
  });
  const stored = records.map((r) => outcomes[storable.indexOf(r)] === true);
  // 2. Enqueue, per lane: a single message with SendMessage, a batch with SendMessageBatch (≤ 10 per request); a
  // scheduled one with the SQS delay to its release, or a release timer when that is beyond SQS's 15 minutes.
  const failedIds = new Set<string>(
    records.filter((r, i) => !stored[i] && !refused.has(r.id)).map((r) => r.id),
  );
  const releases = new Map(records.map((r) => [r.id, r.schedule ? releaseVia(r.schedule, now) : undefined]));
  const delayOf = (m: { id: string }) => {
    const release = releases.get(m.id);
    return release?.kind === 'delay' ? release.seconds : 0;
  };
  const timed = records.flatMap((r, i) => {
    const via = releases.get(r.id);
    return stored[i] && via?.kind === 'timer' ? [{ record: r, atMs: via.atMs }] : [];
  });
  await Promise.all([
    ...timed.map(({ record, atMs }) =>
      setTimer(deps, record, atMs).catch((err: unknown) => {
        deps.logger.error('could not set the release timer', { err, messageId: record.id });
        failedIds.add(record.id);
      }),
    ),
    ...LANES.map(async (lane) => {
      const laneRecords = records.filter(
        (r, i) => stored[i] && r.priority === lane && releases.get(r.id)?.kind !== 'timer',
      );
      if (laneRecords.length === 0) return;
      if (mode === 'single') {
        const only = laneRecords[0] as MessageRecord;
        await deps.queue.enqueue(lane, toQueuedMessage(only), delayOf(only)).catch((err: unknown) => {
          deps.logger.error('enqueue failed', { err, messageId: only.id });
          failedIds.add(only.id);
        });
      } else {
        for (const id of await deps.queue.enqueueBatch(lane, laneRecords.map(toQueuedMessage), delayOf)) {
          deps.logger.error('enqueue failed', { messageId: id });
          failedIds.add(id);
        }
      }
    }),
  ]);
  // 3. Never leave a record `queued` that no queue holds.
  await Promise.all(
    records
      .filter((r, i) => stored[i] && failedIds.has(r.id))
      .map((r) =>
        deps.messages
          .transition(r.id, changes.withdraw(createdAt, ENQUEUE_FAILED))
          .catch((err: unknown) =>
            deps.logger.error('could not mark unqueued record', { err, messageId: r.id }),
          ),
      ),
  );
  deps.metrics.count('Accepted', records.length - failedIds.size - refused.size);
  return records.map(
    (r) =>
      refused.get(r.id) ??
      (failedIds.has(r.id)
        ? new RetryLaterError('could not queue the message; retry')
        : r.schedule
          ? { id: r.id, status: 'scheduled' as const, ...scheduleView(r) }
          : { id: r.id, status: 'queued' as const }),
  );
}

/**
 * A release timer for a record scheduled beyond SQS's longest delay. Without timers (a deployment or test that has
 * none) the copy goes to its lane with the longest delay and reaches its release in hops (`notBeforeMs`).
 */
async function setTimer(deps: IngestDeps, r: MessageRecord, atMs: number): Promise<void> {
  if (deps.timers) return deps.timers.set({ id: r.id, lane: r.priority, atMs });
  await deps.queue.enqueue(r.priority, toQueuedMessage(r), MAX_DELAY_SECONDS);
}
