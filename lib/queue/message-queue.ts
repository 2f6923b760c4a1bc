import type { QueuedMessage } from '#lib/model/index.js';
import type { LaneName } from '#lib/resources/index.js';

/** Port: the priority lanes. */
export interface MessageQueue {
  enqueue(lane: LaneName, message: QueuedMessage, delaySeconds?: number): Promise<void>;
  /**
   * SendMessageBatch in chunks of 10 (the SQS maximum); returns the ids that were not enqueued. `delaySecondsOf`:
   * each message's own delay (scheduled ones), default none.
   */
  enqueueBatch(
    lane: LaneName,
    messages: QueuedMessage[],
    delaySecondsOf?: (m: QueuedMessage) => number,
  ): Promise<string[]>;
  /** Makes a received message visible again after `seconds` (how the sender schedules a retry). */
  retryAfter(lane: LaneName, receiptHandle: string, seconds: number): Promise<void>;
}

/** SQS allows DelaySeconds up to 900 s. */
export const MAX_DELAY_SECONDS = 900;
