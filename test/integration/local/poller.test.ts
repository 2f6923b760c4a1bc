import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SqsEmulator, startSqs } from '#local/emulators.js';
import { FunctionTimeoutError, InvalidBatchResponseError } from '#local/errors.js';
import { type Poller, type PollerOptions, startPoller } from '#local/poller.js';
import { localSqsClient, waitFor } from '#test/helpers/local-clients.js';

const REGION = 'us-east-1';

let emulator: SqsEmulator;
let sqs: SQSClient;
let queueCount = 0;
const pollers: Poller[] = [];

beforeAll(async () => {
  emulator = await startSqs();
  sqs = localSqsClient(emulator.endpoint);
});

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
});

afterAll(async () => {
  sqs.destroy();
  await emulator.stop();
});

/** A fresh queue per test; a 1 s visibility timeout makes redelivery quick. */
async function createQueue(attributes: Record<string, string> = {}) {
  const name = `poller-${++queueCount}`;
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '1', ...attributes } }),
  );
  const url = QueueUrl ?? '';
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return { url, arn: Attributes?.QueueArn ?? '' };
}

async function send(queueUrl: string, bodies: string[]) {
  for (let i = 0; i < bodies.length; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body })),
      }),
    );
  }
}

async function queueDepth(queueUrl: string): Promise<number> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible)
  );
}

function poll(
  queue: { url: string; arn: string },
  overrides: Partial<PollerOptions> & Pick<PollerOptions, 'handler'>,
): Poller {
  const poller = startPoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: REGION,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 2,
    functionTimeoutSeconds: 5,
    onError: () => {},
    ...overrides,
  });
  pollers.push(poller);
  return poller;
}

describe('startPoller', () => {
  it('invokes the handler with an SQS event and deletes a successful batch', async () => {
    const queue = await createQueue();
    await send(queue.url, ['a', 'b', 'c', 'd', 'e']);
    const seen: SQSRecord[] = [];

    const poller = poll(queue, {
      handler: async (event) => {
        seen.push(...event.Records);
      },
    });

    await waitFor(() => poller.stats().deleted === 5, { what: '5 deletes' });
    expect(seen.map((r) => r.body).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(seen[0]).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: queue.arn, awsRegion: REGION });
    expect(seen[0]?.attributes.ApproximateReceiveCount).toBe('1');
    expect(await queueDepth(queue.url)).toBe(0);
    expect(poller.stats()).toMatchObject({ received: 5, deleted: 5, failed: 0 });
  });

  it('keeps batchItemFailures in the queue and delivers them again with a higher receive count', async () => {
    const queue = await createQueue();
    await send(queue.url, ['ok-1', 'retry', 'ok-2']);
    const deliveries: { body: string; receiveCount: string }[] = [];

    const poller = poll(queue, {
      handler: async (event) => {
        deliveries.push(
          ...event.Records.map((r) => ({ body: r.body, receiveCount: r.attributes.ApproximateReceiveCount })),
        );
        const firstTry = event.Records.filter(
          (r) => r.body === 'retry' && r.attributes.ApproximateReceiveCount === '1',
        );
        return { batchItemFailures: firstTry.map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });

    await waitFor(() => poller.stats().deleted === 3, { what: 'all messages deleted' });
    expect(deliveries.filter((d) => d.body === 'retry')).toEqual([
      { body: 'retry', receiveCount: '1' },
      { body: 'retry', receiveCount: '2' },
    ]);
    expect(deliveries.filter((d) => d.body.startsWith('ok'))).toHaveLength(2);
    expect(poller.stats()).toMatchObject({ received: 4, deleted: 3, failed: 1 });
  });

  it('never runs more than maxConcurrency invocations at once', async () => {
    const queue = await createQueue({ VisibilityTimeout: '30' });
    await send(
      queue.url,
      Array.from({ length: 12 }, (_, i) => `m${i}`),
    );
    let running = 0;
    let peak = 0;

    const poller = poll(queue, {
      batchSize: 1,
      maxConcurrency: 3,
      handler: async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(50);
        running--;
      },
    });

    await waitFor(() => poller.stats().deleted === 12, { what: '12 deletes' });
    expect(peak).toBe(3);
    expect(poller.stats().invocations).toBe(12);
  });

  it('gathers a batch across receives within the batching window', async () => {
    const queue = await createQueue();
    await send(
      queue.url,
      Array.from({ length: 15 }, (_, i) => `m${i}`),
    );
    const sizes: number[] = [];

    const poller = poll(queue, {
      batchSize: 15,
      maxBatchingWindowSeconds: 1,
      maxConcurrency: 1,
      handler: async (event) => {
        sizes.push(event.Records.length);
      },
    });

    await waitFor(() => poller.stats().deleted === 15, { what: '15 deletes' });
    expect(sizes).toEqual([15]);
  });

  it('deletes nothing when the handler throws, so the whole batch is retried', async () => {
    const queue = await createQueue();
    await send(queue.url, ['x', 'y']);
    const batches: { bodies: string[]; receiveCounts: string[] }[] = [];
    const errors: unknown[] = [];

    const poller = poll(queue, {
      maxConcurrency: 1,
      onError: (err) => errors.push(err),
      handler: async (event) => {
        batches.push({
          bodies: event.Records.map((r) => r.body).sort(),
          receiveCounts: event.Records.map((r) => r.attributes.ApproximateReceiveCount),
        });
        if (batches.length === 1) throw new Error('downstream unavailable');
      },
    });

    await waitFor(() => poller.stats().deleted === 2, { what: 'retry to succeed' });
    expect(batches).toEqual([
      { bodies: ['x', 'y'], receiveCounts: ['1', '1'] },
      { bodies: ['x', 'y'], receiveCounts: ['2', '2'] },
    ]);
    expect(errors).toEqual([expect.objectContaining({ message: 'downstream unavailable' })]);
  });

  it('treats an itemIdentifier that is not in the batch as a failure of the whole batch', async () => {
    const queue = await createQueue();
    await send(queue.url, ['only']);
    const errors: unknown[] = [];
    let invocations = 0;

    const poller = poll(queue, {
      onError: (err) => errors.push(err),
      handler: async () => {
        invocations++;
        return invocations === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] } : undefined;
      },
    });

    await waitFor(() => poller.stats().deleted === 1, { what: 'second delivery to succeed' });
    expect(invocations).toBe(2);
    expect(errors[0]).toBeInstanceOf(InvalidBatchResponseError);
  });

  it('deletes nothing when the handler runs past the function timeout', async () => {
    const queue = await createQueue();
    await send(queue.url, ['slow']);
    const errors: unknown[] = [];
    let invocations = 0;

    const poller = poll(queue, {
      functionTimeoutSeconds: 0.2,
      onError: (err) => errors.push(err),
      handler: async () => {
        invocations++;
        if (invocations === 1) await sleep(600);
      },
    });

    await waitFor(() => poller.stats().deleted === 1, { what: 'second delivery to succeed' });
    expect(invocations).toBe(2);
    expect(errors[0]).toBeInstanceOf(FunctionTimeoutError);
  });

  it('lets SQS move a message that always fails to the DLQ after maxReceiveCount', {
    timeout: 20_000,
  }, async () => {
    // fauxqs applies the RedrivePolicy on receive, as SQS does; the poller never moves messages itself.
    const dlq = await createQueue();
    const queue = await createQueue({
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 2 }),
    });
    await send(queue.url, ['poison']);
    const receiveCounts: string[] = [];

    poll(queue, {
      waitTimeSeconds: 1,
      handler: async (event) => {
        receiveCounts.push(...event.Records.map((r) => r.attributes.ApproximateReceiveCount));
        throw new Error('always fails');
      },
    });

    const moved = await waitFor(
      async () => {
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: dlq.url,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        return Messages?.[0];
      },
      { timeoutMs: 15_000, what: 'message in DLQ' },
    );
    expect(moved.Body).toBe('poison');
    expect(receiveCounts).toEqual(['1', '2']);
    expect(await queueDepth(queue.url)).toBe(0);
  });

  it('stops promptly while a long poll is waiting on an empty queue', { timeout: 3_000 }, async () => {
    const queue = await createQueue();
    const poller = poll(queue, { waitTimeSeconds: 20, maxConcurrency: 4, handler: async () => {} });
    await sleep(100);

    await poller.stop();

    expect(poller.stats().invocations).toBe(0);
  });

  it('waits for a running invocation and deletes its batch before stop() resolves', async () => {
    const queue = await createQueue({ VisibilityTimeout: '30' });
    await send(queue.url, ['in-flight']);
    let started = false;
    let finished = false;
    const poller = poll(queue, {
      handler: async () => {
        started = true;
        await sleep(300);
        finished = true;
      },
    });
    await waitFor(() => started, { what: 'invocation to start' });

    await poller.stop();

    expect(finished).toBe(true);
    expect(poller.stats().deleted).toBe(1);
    expect(await queueDepth(queue.url)).toBe(0);
  });
});
