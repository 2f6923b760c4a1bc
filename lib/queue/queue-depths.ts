import type { LaneName } from '#lib/resources/index.js';

/** How full one lane is, by SQS's approximate counts (they lag a few seconds). */
export interface LaneDepth {
  lane: LaneName;
  /** Waiting to be received. */
  waiting: number;
  /** Received by a sender and not yet deleted (being sent, or waiting out a retry's visibility timeout). */
  inFlight: number;
  /** Sent with a delay that has not passed (deferred copies). */
  delayed: number;
  /** In the lane's dead-letter queue; undefined where the function has no DLQ URL. */
  dead?: number;
}

/** Port: the lanes' depths, for operators (GET /v1/apps). */
export interface QueueDepths {
  depths(): Promise<LaneDepth[]>;
}
