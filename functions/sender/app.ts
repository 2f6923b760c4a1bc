import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { flushMetrics, refreshConfig, withLogContext } from '#functions/shared/middleware.js';
import type { ConfigSource } from '#lib/config/index.js';
import { LANES, type LaneName } from '#lib/resources/index.js';
import { type IncomingRecord, processBatch, type SenderDeps } from '#lib/sender/index.js';

/** Which lane a record came from: its queue's name is the last part of both the ARN and the queue URL. */
const laneOf = (deps: { env: { queueUrls: Record<LaneName, string> } }, arn: string): LaneName => {
  const name = arn.split(':').pop();
  return LANES.find((lane) => deps.env.queueUrls[lane].split('/').pop() === name) ?? 'normal';
};

/** The bare handler: SQS event → lib/sender → partial batch response. */
export const createSenderHandler =
  (deps: SenderDeps & { env: { queueUrls: Record<LaneName, string> } }) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const records: IncomingRecord[] = event.Records.map((r) => ({
      sqsMessageId: r.messageId,
      receiptHandle: r.receiptHandle,
      body: r.body,
      receiveCount: Number(r.attributes.ApproximateReceiveCount) || 1,
      lane: laneOf(deps, r.eventSourceARN),
      ...(Number(r.attributes.ApproximateFirstReceiveTimestamp) > 0
        ? { firstReceivedAtMs: Number(r.attributes.ApproximateFirstReceiveTimestamp) }
        : {}),
    }));
    const { failures } = await processBatch(deps, records);
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };

/** The handler as Lambda runs it: log context (request id, cold start), metrics, config refresh. */
export const wrapSenderHandler = (
  deps: Parameters<typeof createSenderHandler>[0] & { configSource?: ConfigSource },
) =>
  withLogContext(
    middy<SQSEvent, SQSBatchResponse, Error, Context>(createSenderHandler(deps))
      .use(flushMetrics(deps.metrics))
      .use(refreshConfig(deps.configSource)),
  );
