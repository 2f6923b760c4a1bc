import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { flushMetrics, refreshConfig, withLogContext } from '#functions/shared/middleware.js';
import type { ConfigSource } from '#lib/config/index.js';
import { type NotifyDeps, type NotifyRecord, processNotifyBatch } from '#lib/notify/index.js';

/** The bare handler: SQS event of the notify queue → lib/notify → partial batch response. */
export const createNotifyHandler =
  (deps: NotifyDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const records: NotifyRecord[] = event.Records.map((r) => ({
      sqsMessageId: r.messageId,
      receiptHandle: r.receiptHandle,
      body: r.body,
      receiveCount: Number(r.attributes.ApproximateReceiveCount) || 1,
      sentAtMs: Number(r.attributes.SentTimestamp) || Date.now(),
    }));
    const { failures } = await processNotifyBatch(deps, records);
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };

/** The handler as Lambda runs it: log context (request id, cold start), metrics, config refresh. */
export const wrapNotifyHandler = (deps: NotifyDeps & { configSource?: ConfigSource }) =>
  withLogContext(
    middy<SQSEvent, SQSBatchResponse, Error, Context>(createNotifyHandler(deps))
      .use(flushMetrics(deps.metrics))
      .use(refreshConfig(deps.configSource)),
  );
