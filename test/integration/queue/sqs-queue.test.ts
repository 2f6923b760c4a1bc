import { GetQueueAttributesCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  decodeQueuedMessage,
  encodeQueuedMessage,
  newRecord,
  type QueuedMessage,
  toQueuedMessage,
} from '#lib/model/index.js';
import { QueueUnavailableError, SqsMessageQueue } from '#lib/queue/index.js';
import { type LaneName, QUEUE_MAX_MESSAGE_BYTES } from '#lib/resources/index.js';
import { closedEndpoint } from '#test/helpers/closed-port.js';
import { localSqsClient } from '#test/helpers/local-clients.js';
import { textRequest } from '#test/helpers/unit-sender.js';
import { useUnitSqs } from '#test/helpers/unit-sqs.js';

const message = (id: string): QueuedMessage =>
  toQueuedMessage(
    newRecord({
      id,
      app: 'ops',
      priority: 'normal',
      request: textRequest(),
      apiKey: 'unit',
      createdAt: '2026-12-01T08:00:00.000Z',
      expiresAt: 1_767_081_600,
    }),
  );

describe('SqsMessageQueue (fauxqs)', () => {
  const sqs = useUnitSqs();
  let urls: Record<LaneName, string>;

  /** Fresh lanes per test, so tests never see each other's messages. */
  async function lanes(): Promise<Record<LaneName, string>> {
    urls = await sqs.lanes();
    return urls;
  }

  const receive = async (url: string, max = 10) =>
    (
      await sqs.client.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, WaitTimeSeconds: 0 }),
      )
    ).Messages ?? [];

  const depth = async (url: string) => {
    const out = await sqs.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return {
      visible: Number(out.Attributes?.ApproximateNumberOfMessages),
      delayed: Number(out.Attributes?.ApproximateNumberOfMessagesDelayed),
    };
  };

  it('puts the encoded body on the lane it is asked for, and only there', async () => {
    const queue = new SqsMessageQueue(sqs.client, await lanes());
    const m = message('msg_lane');

    await queue.enqueue('high', m);

    const [received] = await receive(urls.high);
    expect(received?.Body).toBe(encodeQueuedMessage(m));
    expect(decodeQueuedMessage(received?.Body ?? '')).toEqual(m);
    expect(await depth(urls.normal)).toEqual({ visible: 0, delayed: 0 });
  });

  it('delays a message, capping the delay at the 900 s SQS allows (more is refused by SQS)', async () => {
    const delays: unknown[] = [];
    const recording = {
      send: ((command: { input: { DelaySeconds?: number } }) => {
        delays.push(command.input.DelaySeconds);
        return sqs.client.send(command as never);
      }) as SQSClient['send'],
    };
    const queue = new SqsMessageQueue(recording, await lanes());

    await queue.enqueue('normal', message('msg_later'), 5_000);
    await queue.enqueue('normal', message('msg_soon'), 2.4);

    // fauxqs would take 5,000; SQS answers InvalidParameterValue above 900.
    expect(delays).toEqual([900, 2]);
    expect(await depth(urls.normal)).toEqual({ visible: 0, delayed: 2 });
  });

  it('sends 25 messages as three SendMessageBatch requests (10, 10, 5) and reports none unsent', async () => {
    const sent: number[] = [];
    const counting = {
      send: ((command: { input: { Entries?: unknown[] } }) => {
        if (command.input.Entries) sent.push(command.input.Entries.length);
        return sqs.client.send(command as never);
      }) as SQSClient['send'],
    };
    const queue = new SqsMessageQueue(counting, await lanes());
    const messages = Array.from({ length: 25 }, (_, i) => message(`msg_batch_${i}`));

    const unsent = await queue.enqueueBatch('normal', messages);

    expect(unsent).toEqual([]);
    expect(sent.sort()).toEqual([10, 10, 5].sort());
    expect((await depth(urls.normal)).visible).toBe(25);
  });

  it('keeps every SendMessageBatch within the queue’s maximum message size, so large messages never fail a chunk', async () => {
    const totals: number[] = [];
    const measuring = {
      send: ((command: { input: { Entries?: { MessageBody?: string }[] } }) => {
        const entries = command.input.Entries;
        if (entries) totals.push(entries.reduce((n, e) => n + Buffer.byteLength(e.MessageBody ?? ''), 0));
        return Promise.resolve({ Successful: [], Failed: [] });
      }) as unknown as SQSClient['send'],
    };
    const queue = new SqsMessageQueue(measuring, { high: 'h', normal: 'n' });
    const big = (id: string): QueuedMessage => {
      const m = message(id);
      return { ...m, request: { ...m.request, content: { content: 'x'.repeat(100_000) } } };
    };

    const unsent = await queue.enqueueBatch(
      'normal',
      [...Array(7)].map((_, i) => big(`msg_big_${i}`)),
    );

    expect(unsent).toEqual([]);
    expect(totals.length).toBeGreaterThanOrEqual(3);
    for (const total of totals) expect(total).toBeLessThanOrEqual(QUEUE_MAX_MESSAGE_BYTES);
  });

  it('reports the ids of entries SQS failed, and of a whole chunk whose request failed', async () => {
    const messages = Array.from({ length: 12 }, (_, i) => message(`msg_partial_${i}`));
    let call = 0;
    // A double at the client boundary: SQS answers the first chunk with one failed entry, the second not at all.
    const flaky = {
      send: (async () => {
        if (call++ === 0)
          return { Successful: [], Failed: [{ Id: '3', SenderFault: false, Code: 'InternalError' }] };
        throw new Error('socket hang up');
      }) as unknown as SQSClient['send'],
    };
    const queue = new SqsMessageQueue(flaky, { high: 'h', normal: 'n' });

    const unsent = await queue.enqueueBatch('normal', messages);

    expect(unsent.sort()).toEqual(['msg_partial_3', 'msg_partial_10', 'msg_partial_11'].sort());
  });

  it('makes a received message visible again after the retry delay it is given', async () => {
    const queue = new SqsMessageQueue(sqs.client, await lanes());
    await queue.enqueue('normal', message('msg_retry'));
    const [first] = await receive(urls.normal);
    expect(await receive(urls.normal)).toEqual([]);

    await queue.retryAfter('normal', first?.ReceiptHandle as string, 0);

    const [again] = await receive(urls.normal);
    expect(again?.MessageId).toBe(first?.MessageId);
  });

  it('raises QueueUnavailableError when SQS cannot be reached, and reports a batch as unsent', async () => {
    const down = localSqsClient(await closedEndpoint(), { maxAttempts: 1 });
    const queue = new SqsMessageQueue(down, { high: urls.high, normal: urls.normal });
    try {
      const err = await queue.enqueue('normal', message('msg_down')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QueueUnavailableError);
      expect((err as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });

      expect(await queue.enqueueBatch('normal', [message('msg_a'), message('msg_b')])).toEqual([
        'msg_a',
        'msg_b',
      ]);
    } finally {
      down.destroy();
    }
  });
});
