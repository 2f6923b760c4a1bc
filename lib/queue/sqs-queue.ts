import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { AWS_MAX_ATTEMPTS, AWS_REQUEST_HANDLER, isAwsUnavailable, sendOptions } from '#lib/aws/index.js';
import { encodeQueuedMessage, type QueuedMessage } from '#lib/model/index.js';
import type { LaneName } from '#lib/resources/index.js';
import { QueueUnavailableError } from './errors.js';
import { MAX_DELAY_SECONDS, type MessageQueue } from './message-queue.js';

/** SQS allows VisibilityTimeout up to 12 h. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;

export const createSqsClient = (appId: string): SQSClient =>
  new SQSClient({
    userAgentAppId: appId,
    maxAttempts: AWS_MAX_ATTEMPTS,
    requestHandler: AWS_REQUEST_HANDLER,
  });

/**
 * The lanes on SQS. An SDK error that means SQS is unavailable arrives as the port's QueueUnavailableError, so
 * nothing above this adapter sees an SDK error.
 */
export class SqsMessageQueue implements MessageQueue {
  private readonly sqs: Pick<SQSClient, 'send'>;

  constructor(
    sqs: Pick<SQSClient, 'send'>,
    private readonly urls: Readonly<Record<LaneName, string>>,
  ) {
    const send = (command: Parameters<SQSClient['send']>[0]) =>
      sqs.send(command, sendOptions()).catch((err: unknown) => {
        throw isAwsUnavailable(err) ? new QueueUnavailableError({ cause: err }) : err;
      });
    this.sqs = { send: send as SQSClient['send'] };
  }

  async enqueue(lane: LaneName, message: QueuedMessage, delaySeconds = 0): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.urls[lane],
        MessageBody: encodeQueuedMessage(message),
        DelaySeconds: clamp(delaySeconds, 0, MAX_DELAY_SECONDS),
      }),
    );
  }

  async enqueueBatch(lane: LaneName, messages: QueuedMessage[]): Promise<string[]> {
    const failed: string[] = [];
    const chunks: QueuedMessage[][] = [];
    for (let i = 0; i < messages.length; i += 10) chunks.push(messages.slice(i, i + 10));
    await Promise.all(
      chunks.map(async (chunk) => {
        try {
          const out = await this.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: this.urls[lane],
              Entries: chunk.map((m, i) => ({ Id: String(i), MessageBody: encodeQueuedMessage(m) })),
            }),
          );
          for (const f of out.Failed ?? []) {
            const m = chunk[Number(f.Id)];
            if (m) failed.push(m.id);
          }
        } catch {
          failed.push(...chunk.map((m) => m.id));
        }
      }),
    );
    return failed;
  }

  async retryAfter(lane: LaneName, receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.urls[lane],
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: clamp(Math.ceil(seconds), 0, MAX_VISIBILITY_SECONDS),
      }),
    );
  }
}

const clamp = (n: number, min: number, max: number): number => Math.min(max, Math.max(min, Math.round(n)));
