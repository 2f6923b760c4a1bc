import { GetQueueAttributesCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { wrapSenderHandler } from '#functions/sender/app.js';
import type { LaneName, QueueId } from '#lib/resources/index.js';
import { createSenderDeps, type RuntimeOptions } from '#lib/runtime/index.js';
import { buildLambdaContext, buildSqsEvent } from '#local/events/index.js';
import { LOCAL_REGION, type LocalStack } from '#local/stack.js';

/** Receives up to `max` messages from a lane as the event source mapping would, as a Lambda SQS event. */
export async function receiveEvent(
  stack: LocalStack,
  lane: LaneName,
  max = 10,
  waitSeconds = 2,
): Promise<SQSEvent> {
  const out = await stack.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: stack.resources.queueUrls[lane],
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return buildSqsEvent(out.Messages ?? ([] as Message[]), stack.resources.queueArns[lane], LOCAL_REGION);
}

/** Receives until `count` messages were collected (bounded). */
export async function receiveAll(stack: LocalStack, lane: LaneName, count: number): Promise<SQSEvent> {
  const records: SQSEvent['Records'] = [];
  const deadline = Date.now() + 20_000;
  while (records.length < count && Date.now() < deadline) {
    records.push(...(await receiveEvent(stack, lane, Math.min(10, count - records.length))).Records);
  }
  return { Records: records };
}

export interface SenderContainer {
  invoke(event: SQSEvent): Promise<SQSBatchResponse>;
  close(): Promise<void>;
}

/**
 * A fresh sender "container": its own clients, token cache memory and quota blocks, like a cold Lambda instance,
 * sharing only the stack's table, queues and WeCom.
 */
export async function senderContainer(
  stack: LocalStack,
  opts: RuntimeOptions = {},
): Promise<SenderContainer> {
  const deps = await createSenderDeps({
    logWrite: () => undefined,
    ...opts,
    env: stack.env,
    config: stack.config,
  });
  const handler = wrapSenderHandler(deps);
  return {
    invoke: (event) =>
      handler(
        event,
        buildLambdaContext({ functionName: 'sender', memoryMb: 512, timeoutSeconds: 30 }) as Context,
      ),
    close: () => deps.close(),
  };
}

/** Visible + in flight + delayed messages of a queue. */
export async function queueDepth(stack: LocalStack, id: QueueId): Promise<number> {
  const out = await stack.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: stack.resources.queueUrls[id],
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}
