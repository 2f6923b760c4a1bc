import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { LANES, type LaneName } from '#lib/resources/index.js';
import type { LaneDepth, QueueDepths } from './queue-depths.js';
import { portSqs } from './sqs-queue.js';

const COUNTS = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
] as const;

/** The lanes' depths from SQS GetQueueAttributes: one call per lane and per DLQ, in parallel. */
export class SqsQueueDepths implements QueueDepths {
  private readonly sqs: Pick<SQSClient, 'send'>;

  constructor(
    sqs: Pick<SQSClient, 'send'>,
    private readonly lanes: Readonly<Record<LaneName, string>>,
    private readonly deadLetters?: Readonly<Record<LaneName, string>>,
  ) {
    this.sqs = portSqs(sqs);
  }

  async depths(): Promise<LaneDepth[]> {
    return Promise.all(
      LANES.map(async (lane): Promise<LaneDepth> => {
        const dlqUrl = this.deadLetters?.[lane];
        const [counts, dead] = await Promise.all([
          this.counts(this.lanes[lane]),
          dlqUrl === undefined ? undefined : this.counts(dlqUrl),
        ]);
        return {
          lane,
          waiting: counts.ApproximateNumberOfMessages,
          inFlight: counts.ApproximateNumberOfMessagesNotVisible,
          delayed: counts.ApproximateNumberOfMessagesDelayed,
          ...(dead
            ? {
                dead:
                  dead.ApproximateNumberOfMessages +
                  dead.ApproximateNumberOfMessagesNotVisible +
                  dead.ApproximateNumberOfMessagesDelayed,
              }
            : {}),
        };
      }),
    );
  }

  private async counts(url: string): Promise<Record<(typeof COUNTS)[number], number>> {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...COUNTS] }),
    );
    const a = out.Attributes ?? {};
    return Object.fromEntries(COUNTS.map((c) => [c, Number(a[c] ?? 0)])) as Record<
      (typeof COUNTS)[number],
      number
    >;
  }
}
