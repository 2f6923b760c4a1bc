export { QueueError, QueueUnavailableError } from './errors.js';
export { MAX_DELAY_SECONDS, type MessageQueue } from './message-queue.js';
export { createSqsClient, SqsMessageQueue } from './sqs-queue.js';
