export type { DeadLetter, DeadLetterQueue } from './dead-letter-queue.js';
export { QueueError, QueueUnavailableError } from './errors.js';
// EventBridge Scheduler's adapter is imported from './eventbridge-release-timers.js' on first use only (lib/runtime
// ingest.ts): re-exported here, its client would load with every import of this index.
export { MAX_DELAY_SECONDS, type MessageQueue } from './message-queue.js';
export { type NotifyQueue, SqsNotifyQueue } from './notify-queue.js';
export type { LaneDepth, QueueDepths } from './queue-depths.js';
export type { ReleaseTimer, ReleaseTimers } from './release-timers.js';
export { SqsDeadLetterQueue } from './sqs-dead-letter-queue.js';
export { createSqsClient, SqsMessageQueue } from './sqs-queue.js';
export { SqsQueueDepths } from './sqs-queue-depths.js';
