import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeNotifyJob, type NotifyJob } from '#lib/model/index.js';
import { portSqs, visibilitySeconds } from './sqs-queue.js';

/** Port: the notify queue (one job per webhook) and its DLQ. */
export interface NotifyQueue {
  enqueue(job: NotifyJob): Promise<void>;
  /** Makes a received job visible again after `seconds` (≤ 12 h, SQS's bound): the next webhook attempt. */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
  /** Moves a job whose retries ran out to the DLQ, with why; the caller then acknowledges the original. */
  deadLetter(body: string, reason: string): Promise<void>;
}

/**
 * The notify queue on SQS. The DLQ URL is only needed by the notify function; producers (ingest, sender, callback)
 * leave it out.
 */
export class SqsNotifyQueue implements NotifyQueue {
  private readonly sqs: Pick<SQSClient, 'send'>;

  constructor(
    sqs: Pick<SQSClient, 'send'>,
    private readonly urls: { readonly queue: string; readonly deadLetter?: string },
  ) {
    this.sqs = portSqs(sqs);
  }

  async enqueue(job: NotifyJob): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.urls.queue, MessageBody: encodeNotifyJob(job) }),
    );
  }

  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.urls.queue,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: visibilitySeconds(seconds),
      }),
    );
  }

  async deadLetter(body: string, reason: string): Promise<void> {
    if (!this.urls.deadLetter) throw new Error('this notify queue was built without its DLQ URL');
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.urls.deadLetter,
        MessageBody: body,
        MessageAttributes: { reason: { DataType: 'String', StringValue: reason.slice(0, 256) } },
      }),
    );
  }
}
