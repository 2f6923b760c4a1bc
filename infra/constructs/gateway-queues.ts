import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FUNCTIONS, LANES, type LaneName, QUEUES, type QueueId } from '#lib/resources/index.js';

/**
 * AWS: a source queue's visibility timeout should be at least six times the function timeout, or a
 * batch still being retried by Lambda becomes visible again and is processed twice
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html#events-sqs-queueconfig).
 */
export const MIN_VISIBILITY_TO_TIMEOUT_RATIO = 6;

/** Throws at synth if a lane's visibility timeout is below 6 × the sender timeout. */
export function assertLaneVisibility(): void {
  const minimum = MIN_VISIBILITY_TO_TIMEOUT_RATIO * FUNCTIONS.sender.timeoutSeconds;
  for (const lane of LANES) {
    const visibility = QUEUES[lane].visibilityTimeoutSeconds;
    if (visibility < minimum) {
      throw new Error(
        `queue '${lane}' visibility timeout ${visibility}s is below ${MIN_VISIBILITY_TO_TIMEOUT_RATIO} × ` +
          `sender timeout (${minimum}s); fix QUEUES or FUNCTIONS in lib/resources`,
      );
    }
  }
}

export interface GatewayQueuesProps {
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Every queue in `QUEUES`: SSE with SQS-managed keys (no KMS key to pay for or grant), TLS-only access,
 * and each lane redriving to its DLQ after `maxReceiveCount` receives.
 */
export class GatewayQueues extends Construct {
  readonly byId: Readonly<Record<QueueId, Queue>>;
  readonly lanes: Readonly<Record<LaneName, Queue>>;
  readonly deadLetterQueues: readonly { readonly lane: LaneName; readonly queue: Queue }[];
  /** The webhook jobs (notify function) and the jobs whose retries ran out. */
  readonly notify: Queue;
  readonly notifyDeadLetter: Queue;

  constructor(scope: Construct, id: string, props: GatewayQueuesProps) {
    super(scope, id);
    assertLaneVisibility();

    const byId = {} as Record<QueueId, Queue>;
    const create = (queueId: QueueId): Queue => {
      const existing = byId[queueId];
      if (existing) return existing;
      const definition = QUEUES[queueId];
      const deadLetter = 'deadLetter' in definition ? definition.deadLetter : undefined;
      const queue = new Queue(this, queueId, {
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        retentionPeriod: Duration.seconds(definition.retentionSeconds),
        maxMessageSizeBytes: definition.maximumMessageBytes,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // Production keeps queues (and the dead messages in the DLQs) if the stack is deleted.
        removalPolicy: props.removalPolicy,
        ...(deadLetter && {
          deadLetterQueue: {
            queue: create(deadLetter.queueId as QueueId),
            maxReceiveCount: deadLetter.maxReceiveCount,
          },
        }),
      });
      byId[queueId] = queue;
      return queue;
    };
    for (const queueId of Object.keys(QUEUES) as QueueId[]) create(queueId);

    this.byId = byId;
    this.lanes = { high: byId.high, normal: byId.normal };
    this.notify = byId.notify;
    this.notifyDeadLetter = byId['notify-dlq'];
    this.deadLetterQueues = LANES.map((lane) => {
      const deadLetter = QUEUES[lane].deadLetter;
      return { lane, queue: byId[deadLetter.queueId as QueueId] };
    });
  }
}
