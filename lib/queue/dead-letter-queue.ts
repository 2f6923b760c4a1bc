import type { LaneName } from '#lib/resources/index.js';

/** One message of a lane's dead-letter queue, as received. */
export interface DeadLetter {
  /** SQS's message id: the same on every receive. */
  messageId: string;
  /** Valid for this receive only. */
  receiptHandle: string;
  body: string;
  /**
   * When this copy was sent to its lane (epoch ms). SQS keeps a standard queue message's enqueue time when it moves
   * to the DLQ, so no attempt of this copy started before it.
   */
  sentAtMs?: number;
  /** Receives so far, in the lane and then in the DLQ. */
  receiveCount?: number;
}

/**
 * Port: the dead-letter queues behind the lanes, for the operator's tools (lib/ops). Reading a message hides it for
 * a short while and never removes it: only {@link DeadLetterQueue.delete} does.
 */
export interface DeadLetterQueue {
  /**
   * Up to `max` messages of the lane's DLQ, each once. They stay in it, hidden from other readers for
   * `hideSeconds` (or until {@link release}), so a tool that stops half-way loses nothing.
   */
  receive(lane: LaneName, max: number, hideSeconds: number): Promise<DeadLetter[]>;
  /** Shows received messages again at once. */
  release(lane: LaneName, receiptHandles: readonly string[]): Promise<void>;
  delete(lane: LaneName, receiptHandle: string): Promise<void>;
}
