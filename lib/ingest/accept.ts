import type { ApiKeyConfig } from '#lib/config/index.js';
import type { MessageRequest } from '#lib/messages/index.js';
import {
  changes,
  type MessageRecord,
  newRecord,
  toQueuedMessage,
  type WithdrawReason,
} from '#lib/model/index.js';
import { LANES } from '#lib/resources/index.js';
import type { Accepted, IngestDeps } from './types.js';

/** The error code of a record whose enqueue failed (the client was answered 503). */
export const ENQUEUE_FAILED = 'enqueue_failed' satisfies WithdrawReason;

/** Writes the new records; true at the index of each record that was stored. */
async function storeRecords(
  deps: IngestDeps,
  records: MessageRecord[],
  mode: 'single' | 'batch',
): Promise<boolean[]> {
  if (mode === 'single') {
    return Promise.all(
      records.map((r) =>
        // `exists` counts as stored: the id is fresh, so the SDK retried a write whose first answer was lost
        // (e.g. DynamoDB restarting), and the record there is ours.
        deps.messages.create(r).then(
          () => true,
          (err: unknown) => {
            deps.logger.error('could not store message record', { err, messageId: r.id });
            return false;
          },
        ),
      ),
    );
  }
  const unwritten = new Set(
    await deps.messages.createBatch(records).catch((err: unknown) => {
      deps.logger.error('could not store message records', { err, count: records.length });
      return records.map((r) => r.id);
    }),
  );
  for (const id of unwritten) deps.logger.error('could not store message record', { messageId: id });
  // "Not written" may still have been written (a request that timed out after DynamoDB applied it): such a
  // record must not stay `queued` with no queue message behind it. Best effort; a missing record is fine.
  await Promise.all(
    records
      .filter((r) => unwritten.has(r.id))
      .map((r) =>
        deps.messages.transition(r.id, changes.withdraw(r.createdAt, 'store_failed')).catch(() => false),
      ),
  );
  return records.map((r) => !unwritten.has(r.id));
}

/**
 * Stores the records of validated requests, then queues them in their priority lanes. Undefined at the index of
 * each message that was not accepted (the client is answered 503 for it); such a record is never left `queued`.
 */
export async function acceptAll(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  items: { id: string; req: MessageRequest }[],
  mode: 'single' | 'batch',
): Promise<(Accepted | undefined)[]> {
  const now = (deps.now ?? Date.now)();
  const createdAt = new Date(now).toISOString();
  const expiresAt = Math.floor(now / 1000) + deps.config.retentionDays * 86_400;
  const records = items.map(({ id, req }) =>
    newRecord({
      id,
      app: req.app,
      priority: req.priority,
      request: req,
      apiKey: apiKey.name,
      createdAt,
      expiresAt,
    }),
  );
  // 1. Records first (a status query must never 404 for an id we return): one conditional PutItem for a single
  // message, BatchWriteItem (25 per request) for a batch.
  const stored = await storeRecords(deps, records, mode);
  // 2. Enqueue, per lane: a single message with SendMessage, a batch with SendMessageBatch in chunks of 10.
  const failedIds = new Set<string>(records.filter((_, i) => !stored[i]).map((r) => r.id));
  await Promise.all(
    LANES.map(async (lane) => {
      const laneRecords = records.filter((r, i) => stored[i] && r.priority === lane);
      if (laneRecords.length === 0) return;
      if (mode === 'single') {
        const only = laneRecords[0] as MessageRecord;
        await deps.queue.enqueue(lane, toQueuedMessage(only)).catch((err: unknown) => {
          deps.logger.error('enqueue failed', { err, messageId: only.id });
          failedIds.add(only.id);
        });
      } else {
        for (const id of await deps.queue.enqueueBatch(lane, laneRecords.map(toQueuedMessage))) {
          deps.logger.error('enqueue failed', { messageId: id });
          failedIds.add(id);
        }
      }
    }),
  );
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
  deps.metrics.count('Accepted', records.length - failedIds.size);
  return records.map((r) => (failedIds.has(r.id) ? undefined : { id: r.id, status: 'queued' as const }));
}
