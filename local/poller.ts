/**
 * The SQS event source mapping that Lambda runs in AWS, which no SQS emulator provides: long-polls a
 * queue, gathers batches, invokes the handler with at most `maxConcurrency` invocations at a time,
 * and deletes what the handler processed.
 *
 * Behaviour follows https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html and
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html:
 * - success: every message is deleted except those named in `batchItemFailures`
 *   (ReportBatchItemFailures); those become visible again when their visibility timeout ends;
 * - error, timeout or an invalid partial batch response: nothing is deleted, the whole batch is retried;
 * - redrive to the DLQ after maxReceiveCount is done by SQS itself on receive (fauxqs does it too),
 *   not by the event source mapping, so this poller does not move messages.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type EventSourceDefinition, FUNCTIONS, NOTIFY_EVENT_SOURCE } from '#lib/resources/index.js';
import { DeleteFailedError, InvalidBatchResponseError, withFunctionTimeout } from '#local/errors.js';
import { buildLambdaContext, buildSqsEvent } from '#local/events/index.js';
import type { ProvisionedResources } from './provision.js';
import { LOCAL_REGION } from './region.js';

// biome-ignore lint/suspicious/noConfusingVoidType: same result type as aws-lambda's SQSHandler, so `async () => {}` fits.
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /** 1–10,000; above 10, `maxBatchingWindowSeconds` must be at least 1 (as in Lambda). */
  readonly batchSize: number;
  /** 0–300. With 0, each invocation gets whatever one receive returned. */
  readonly maxBatchingWindowSeconds: number;
  /** Upper bound on concurrent invocations (Lambda's ScalingConfig.MaximumConcurrency). */
  readonly maxConcurrency: number;
  /** Overrides the queue's visibility timeout on receive. Lambda uses the queue's. */
  readonly visibilityTimeoutSeconds?: number;
  readonly functionTimeoutSeconds: number;
  readonly functionName?: string;
  readonly functionMemoryMb?: number;
  /** Default true, as our event source mappings set `ReportBatchItemFailures`. */
  readonly reportBatchItemFailures?: boolean;
  /** Long-poll wait, 0–20 s. Lambda's pollers use 20. */
  readonly waitTimeSeconds?: number;
  readonly handler: SqsHandler;
  /** Receive/delete failures and handler errors. Default: console.error. */
  readonly onError?: (err: unknown) => void;
}

export interface PollerStats {
  /** Handler invocations started. */
  readonly invocations: number;
  /** Messages received from the queue. */
  readonly received: number;
  /** Messages deleted after a successful invocation. */
  readonly deleted: number;
  /** Messages left in the queue for retry (item failures, failed invocations, failed deletes). */
  readonly failed: number;
}

export interface Poller {
  /**
   * Stops polling at once (in-flight receives are aborted), invokes the handler with any messages
   * already gathered, and resolves when running invocations have settled — each is bounded by the
   * function timeout.
   *
   * An aborted long poll only ends on the client side: fauxqs (like SQS) keeps waiting for up to
   * `waitTimeSeconds` and may still hand a message that arrives meanwhile to the vanished receive, so
   * that message stays invisible for one visibility timeout. Stop the poller before the emulator,
   * or lower `waitTimeSeconds`, when that matters.
   */
  stop(): Promise<void>;
  stats(): PollerStats;
}

/** Pause after a failed receive, so a stopped emulator does not turn the poller into a busy loop. */
const RECEIVE_RETRY_MS = 250;
/** SQS's per-request cap for ReceiveMessage and DeleteMessageBatch. */
const SQS_BATCH_LIMIT = 10;

/** Starts `maxConcurrency` pollers; each gathers a batch, invokes the handler, deletes, repeats. */
export function startPoller(opts: PollerOptions): Poller {
  validate(opts);
  return new SqsPoller(opts);
}

/** The event source mapping of one queue: `maxConcurrency` loops over one receive/invoke/delete state. */
class SqsPoller implements Poller {
  private readonly waitTimeSeconds: number;
  private readonly reportBatchItemFailures: boolean;
  private readonly functionName: string;
  private readonly onError: (err: unknown) => void;
  private readonly abort = new AbortController();
  private readonly counts = { invocations: 0, received: 0, deleted: 0, failed: 0 };
  private readonly workers: Promise<void>[];
  private stopped: Promise<void> | undefined;

  constructor(private readonly opts: PollerOptions) {
    this.waitTimeSeconds = opts.waitTimeSeconds ?? 20;
    this.reportBatchItemFailures = opts.reportBatchItemFailures ?? true;
    this.functionName = opts.functionName ?? 'sqs-consumer';
    this.onError = opts.onError ?? ((err: unknown) => console.error('[poller]', opts.queueUrl, err));
    this.workers = Array.from({ length: opts.maxConcurrency }, () =>
      this.run().catch((err: unknown) => this.onError(err)),
    );
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.abort.abort();
      await Promise.all(this.workers);
    })();
    return this.stopped;
  }

  stats(): PollerStats {
    return { ...this.counts };
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const { Messages } = await this.opts.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
        ...(this.opts.visibilityTimeoutSeconds === undefined
          ? {}
          : { VisibilityTimeout: this.opts.visibilityTimeoutSeconds }),
      }),
      { abortSignal: this.abort.signal },
    );
    return Messages ?? [];
  }
  /** Collects up to batchSize messages within the batching window that starts at the first message. */
  private async gather(): Promise<Message[]> {
    const batch: Message[] = [];
    let windowEnd: number | undefined;
    while (!this.abort.signal.aborted && batch.length < this.opts.batchSize) {
      let wait = this.waitTimeSeconds;
      if (windowEnd !== undefined) {
        const left = windowEnd - Date.now();
        if (left <= 0) break;
        // WaitTimeSeconds is whole seconds; rounding up may stretch an idle window by under a second
        // but never spins. A long poll returns as soon as messages arrive.
        wait = Math.min(this.waitTimeSeconds, Math.ceil(left / 1000));
      }
      let messages: Message[];
      try {
        messages = await this.receive(Math.min(SQS_BATCH_LIMIT, this.opts.batchSize - batch.length), wait);
      } catch (err) {
        if (this.abort.signal.aborted) break;
        this.onError(err);
        await sleep(RECEIVE_RETRY_MS, undefined, { signal: this.abort.signal }).catch(() => undefined);
        continue;
      }
      this.counts.received += messages.length;
      batch.push(...messages);
      if (batch.length > 0 && windowEnd === undefined) {
        if (this.opts.maxBatchingWindowSeconds === 0) break;
        windowEnd = Date.now() + this.opts.maxBatchingWindowSeconds * 1000;
      }
    }
    return batch;
  }
  private async invoke(batch: Message[]): Promise<void> {
    this.counts.invocations++;
    const event = buildSqsEvent(batch, this.opts.queueArn, this.opts.region);
    const context = buildLambdaContext({
      functionName: this.functionName,
      memoryMb: this.opts.functionMemoryMb ?? 512,
      timeoutSeconds: this.opts.functionTimeoutSeconds,
      region: this.opts.region,
    });
    let failed: ReadonlySet<string> | 'all';
    try {
      const result = await withFunctionTimeout(
        Promise.resolve().then(() => this.opts.handler(event, context)),
        this.functionName,
        this.opts.functionTimeoutSeconds,
      );
      failed = this.reportBatchItemFailures ? itemFailures(result, event) : new Set();
    } catch (err) {
      this.onError(err);
      failed = 'all';
    }
    const done = failed === 'all' ? [] : batch.filter((m) => !failed.has(m.MessageId ?? ''));
    this.counts.failed += batch.length - done.length;
    await this.deleteMessages(done);
  }
  private async deleteMessages(messages: Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += SQS_BATCH_LIMIT) {
      const chunk = messages.slice(i, i + SQS_BATCH_LIMIT);
      try {
        const { Successful, Failed } = await this.opts.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.opts.queueUrl,
            Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
        this.counts.deleted += Successful?.length ?? 0;
        if (Failed && Failed.length > 0) {
          this.counts.failed += Failed.length;
          this.onError(
            new DeleteFailedError(
              this.opts.queueUrl,
              Failed.map((f) => ({
                id: chunk[Number(f.Id)]?.MessageId ?? '',
                code: f.Code,
                message: f.Message,
              })),
            ),
          );
        }
      } catch (err) {
        this.counts.failed += chunk.length;
        this.onError(err);
      }
    }
  }
  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const batch = await this.gather();
      // Messages gathered before stop() are processed rather than left invisible until they time out.
      if (batch.length > 0) await this.invoke(batch);
    }
  }
}

/**
 * The message ids to keep, from a partial batch response. Lambda treats a null/empty response or
 * list as full success, and an entry with a missing, empty or unknown `itemIdentifier` as failure of
 * the whole batch (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 */
function itemFailures(result: unknown, event: SQSEvent): ReadonlySet<string> | 'all' {
  if (typeof result !== 'object' || result === null) return new Set();
  const list: unknown = (result as Partial<SQSBatchResponse>).batchItemFailures;
  if (list === undefined || list === null) return new Set();
  if (!Array.isArray(list)) throw new InvalidBatchResponseError('batchItemFailures is not an array');
  const ids = new Set(event.Records.map((r) => r.messageId));
  const failed = new Set<string>();
  for (const item of list as unknown[]) {
    const id: unknown =
      typeof item === 'object' && item !== null
        ? (item as Record<string, unknown>).itemIdentifier
        : undefined;
    if (typeof id !== 'string' || id === '' || !ids.has(id)) {
      throw new InvalidBatchResponseError('itemIdentifier missing, empty or not in the batch', { item });
    }
    failed.add(id);
  }
  return failed;
}

function validate(opts: PollerOptions): void {
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new RangeError(`startPoller: ${what}`);
  };
  check(
    Number.isInteger(opts.batchSize) && opts.batchSize >= 1 && opts.batchSize <= 10_000,
    'batchSize 1–10000',
  );
  check(
    opts.maxBatchingWindowSeconds >= 0 && opts.maxBatchingWindowSeconds <= 300,
    'maxBatchingWindowSeconds 0–300',
  );
  // https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html#lambda-CreateEventSourceMapping-request-BatchSize
  check(
    opts.batchSize <= SQS_BATCH_LIMIT || opts.maxBatchingWindowSeconds >= 1,
    'batchSize above 10 needs maxBatchingWindowSeconds >= 1',
  );
  check(Number.isInteger(opts.maxConcurrency) && opts.maxConcurrency >= 1, 'maxConcurrency >= 1');
  check(opts.functionTimeoutSeconds > 0, 'functionTimeoutSeconds > 0');
  const wait = opts.waitTimeSeconds ?? 20;
  check(Number.isInteger(wait) && wait >= 0 && wait <= 20, 'waitTimeSeconds 0–20');
}

/**
 * Poller options for one of the sender's event sources (lib/resources `senderEventSources`), as Lambda's event
 * source mapping would run it against the provisioned queues. The local stack and the benchmarks both use it.
 */
export function senderPollerOptions(
  source: EventSourceDefinition,
  resources: Pick<ProvisionedResources, 'queueUrls' | 'queueArns'>,
  sqs: SQSClient,
  handler: SqsHandler,
  onError: (err: unknown) => void = () => undefined,
): PollerOptions {
  return eventSourceOptions(source, resources, sqs, handler, onError);
}

/** Poller options for the notify queue (lib/resources `NOTIFY_EVENT_SOURCE`), as its event source mapping runs. */
export function notifyPollerOptions(
  resources: Pick<ProvisionedResources, 'queueUrls' | 'queueArns'>,
  sqs: SQSClient,
  handler: SqsHandler,
  onError: (err: unknown) => void = () => undefined,
): PollerOptions {
  return eventSourceOptions(NOTIFY_EVENT_SOURCE, resources, sqs, handler, onError);
}

/** An event source mapping (its queue, batching and concurrency) with its function's timeout and memory. */
function eventSourceOptions(
  source: EventSourceDefinition | typeof NOTIFY_EVENT_SOURCE,
  resources: Pick<ProvisionedResources, 'queueUrls' | 'queueArns'>,
  sqs: SQSClient,
  handler: SqsHandler,
  onError: (err: unknown) => void,
): PollerOptions {
  return {
    sqs,
    queueUrl: resources.queueUrls[source.queueId],
    queueArn: resources.queueArns[source.queueId],
    region: LOCAL_REGION,
    batchSize: source.batchSize,
    maxBatchingWindowSeconds: source.maxBatchingWindowSeconds,
    maxConcurrency: source.maxConcurrency,
    functionTimeoutSeconds: FUNCTIONS[source.functionId].timeoutSeconds,
    functionName: source.functionId,
    functionMemoryMb: FUNCTIONS[source.functionId].memoryMb,
    handler,
    onError,
  };
}
