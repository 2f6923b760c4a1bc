import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { AWS_MAX_ATTEMPTS, AWS_REQUEST_HANDLER, isAwsUnavailable, sendOptions } from '#lib/aws/index.js';
import { encodeQueuedMessage, type QueuedMessage } from '#lib/model/index.js';
import { type LaneName, QUEUE_MAX_MESSAGE_BYTES } from '#lib/resources/index.js';
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

/** ChangeMessageVisibility's bound, whole seconds. */
export const visibilitySeconds = (seconds: number): number =>
  clamp(Math.ceil(seconds), 0, MAX_VISIBILITY_SECONDS);

/**
 * The client as the adapters use it: an SDK error that means SQS is unavailable arrives as the port's
 * QueueUnavailableError, so nothing above the adapters sees an SDK error. Every call ends by the invocation's
 * deadline, if there is one.
 */
export function portSqs(sqs: Pick<SQSClient, 'send'>): Pick<SQSClient, 'send'> {
  const send = (command: Parameters<SQSClient['send']>[0]) =>
    sqs.send(command, sendOptions()).catch((err: unknown) => {
      throw isAwsUnavailable(err) ? new QueueUnavailableError({ cause: err }) : err;
    });
  return { send: send as SQSClient['send'] };
}

/** The lanes on SQS. */
export class SqsMessageQueue implements MessageQueue {
  private readonly sqs: Pick<SQSClient, 'send'>;

  constructor(
    sqs: Pick<SQSClient, 'send'>,
    private readonly urls: Readonly<Record<LaneName, string>>,
  ) {
    this.sqs = portSqs(sqs);
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

  async enqueueBatch(
    lane: LaneName,
    messages: QueuedMessage[],
    delaySecondsOf?: (m: QueuedMessage) => number,
  ): Promise<string[]> {
    const failed: string[] = [];
    await Promise.all(
      batchChunks(messages, delaySecondsOf).map(async (chunk) => {
        try {
          const out = await this.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: this.urls[lane],
              Entries: chunk.map((m, i) => ({
                Id: String(i),
                MessageBody: m.body,
                ...(m.delaySeconds ? { DelaySeconds: clamp(m.delaySeconds, 0, MAX_DELAY_SECONDS) } : {}),
              })),
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
        VisibilityTimeout: visibilitySeconds(seconds),
      }),
    );
  }
}

/**
 * SendMessageBatch takes at most 10 entries whose bodies together stay within the queue's maximum message size
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html): chunks that
 * respect both, so a few large messages never make a whole chunk fail.
 */
function batchChunks(
  messages: QueuedMessage[],
  delaySecondsOf?: (m: QueuedMessage) => number,
): { id: string; body: string; delaySeconds?: number }[][] {
  const chunks: { id: string; body: string; delaySeconds?: number }[][] = [];
  let chunk: { id: string; body: string; delaySeconds?: number }[] = [];
  let bytes = 0;
  for (const m of messages) {
    const body = encodeQueuedMessage(m);
    const size = Buffer.byteLength(body);
    if (chunk.length === 10 || (chunk.length > 0 && bytes + size > QUEUE_MAX_MESSAGE_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    const delaySeconds = delaySecondsOf?.(m);
    chunk.push({ id: m.id, body, ...(delaySeconds ? { delaySeconds } : {}) });
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

const clamp = (n: number, min: number, max: number): number => Math.min(max, Math.max(min, Math.round(n)));
