import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsDeadLetterQueue } from '#lib/queue/index.js';
import type { LaneName } from '#lib/resources/index.js';
import { useUnitSqs } from '#test/helpers/unit-sqs.js';

describe('SqsDeadLetterQueue (fauxqs)', () => {
  const sqs = useUnitSqs();

  /** Fresh DLQs with `n` messages in the normal one. */
  async function dlqs(n: number): Promise<Record<LaneName, string>> {
    const urls = await sqs.lanes('dlq');
    for (let i = 0; i < n; i++)
      await sqs.client.send(new SendMessageCommand({ QueueUrl: urls.normal, MessageBody: `body-${i}` }));
    return urls;
  }

  it('reads each message once with its enqueue time, hides it without removing it, and release shows it again', async () => {
    const before = Date.now();
    const dlq = new SqsDeadLetterQueue(sqs.client, await dlqs(13));

    const first = await dlq.receive('normal', 100, 60);
    const whileHidden = await dlq.receive('normal', 100, 60);
    await dlq.release(
      'normal',
      first.map((l) => l.receiptHandle),
    );
    const again = await dlq.receive('normal', 5, 60);

    expect(first.map((l) => l.body).sort()).toEqual(Array.from({ length: 13 }, (_, i) => `body-${i}`).sort());
    expect(new Set(first.map((l) => l.messageId)).size).toBe(13);
    expect(first[0]?.sentAtMs).toBeGreaterThanOrEqual(before - 1000);
    expect(first[0]?.receiveCount).toBe(1);
    expect(whileHidden).toEqual([]);
    expect(again).toHaveLength(5);
    expect(await dlq.receive('high', 10, 60)).toEqual([]);
  });

  it('deletes only the message it is told to', async () => {
    const dlq = new SqsDeadLetterQueue(sqs.client, await dlqs(2));
    const [one, two] = await dlq.receive('normal', 10, 60);

    await dlq.delete('normal', one?.receiptHandle as string);
    await dlq.release('normal', [two?.receiptHandle as string]);

    expect((await dlq.receive('normal', 10, 60)).map((l) => l.messageId)).toEqual([two?.messageId]);
  });
});
