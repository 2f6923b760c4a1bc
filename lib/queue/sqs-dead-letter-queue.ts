import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { LaneName } from '#lib/resources/index.js';
import type { DeadLetter, DeadLetterQueue } from './dead-letter-queue.js';
import { portSqs } from './sqs-queue.js';

/** SQS returns at most 10 messages per ReceiveMessage and changes at most 10 per batch call. */
const SQS_BATCH = 10;

/**
 * The lanes' DLQs on SQS (`urls`: each lane's DLQ). Receives long-poll for a second: a short poll samples only some
 * of SQS's servers and may answer empty while messages are there
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
 */
export class SqsDeadLetterQueue implements DeadLetterQueue {
  private readonly sqs: Pick<SQSClient, 'send'>;

  constructor(
    sqs: Pick<SQSClient, 'send'>,
    private readonly urls: Readonly<Record<LaneName, string>>,
  ) {
    this.sqs = portSqs(sqs);
  }

  async receive(lane: LaneName, max: number, hideSeconds: number): Promise<DeadLetter[]> {
    const byId = new Map<string, DeadLetter>();
    while (byId.size < max) {
      const out = await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.urls[lane],
          MaxNumberOfMessages: Math.min(SQS_BATCH, max - byId.size),
          VisibilityTimeout: hideSeconds,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) break;
      let fresh = 0;
      for (const m of messages) {
        if (!m.MessageId || !m.ReceiptHandle) continue;
        // A message seen again (SQS delivers at least once) keeps its place; only the newest receipt handle is valid.
        if (!byId.has(m.MessageId)) fresh++;
        const sent = Number(m.Attributes?.SentTimestamp);
        const receives = Number(m.Attributes?.ApproximateReceiveCount);
        byId.set(m.MessageId, {
          messageId: m.MessageId,
          receiptHandle: m.ReceiptHandle,
          body: m.Body ?? '',
          ...(Number.isFinite(sent) && sent > 0 ? { sentAtMs: sent } : {}),
          ...(Number.isFinite(receives) && receives > 0 ? { receiveCount: receives } : {}),
        });
      }
      if (fresh === 0) break;
    }
    return [...byId.values()];
  }

  async release(lane: LaneName, receiptHandles: readonly string[]): Promise<void> {
    for (let i = 0; i < receiptHandles.length; i += SQS_BATCH) {
      await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.urls[lane],
          Entries: receiptHandles
            .slice(i, i + SQS_BATCH)
            .map((handle, n) => ({ Id: String(n), ReceiptHandle: handle, VisibilityTimeout: 0 })),
        }),
      );
    }
  }

  async delete(lane: LaneName, receiptHandle: string): Promise<void> {
    await this.sqs.send(
      new DeleteMessageCommand({ QueueUrl: this.urls[lane], ReceiptHandle: receiptHandle }),
    );
  }
}
