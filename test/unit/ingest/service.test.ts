import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { type IngestError, submitBatch, submitMessage } from '#lib/ingest/index.js';
import { STATUS } from '#lib/model/index.js';
import { LookupUnavailableError, UnsafeUrlError } from '#lib/net/index.js';
import { SqsMessageQueue } from '#lib/queue/index.js';
import { fakeConfig, fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const apiKey = opsApiKey();

describe('submitMessage', () => {
  it('costs one record write and one SendMessage without an Idempotency-Key', async () => {
    const f = fakeIngest();

    const accepted = await submitMessage(f.deps, apiKey, messageBody('text'));

    expect(accepted).toEqual({ id: expect.stringMatching(/^msg_/), status: 'queued' });
    expect(f.messages.calls).toEqual(['create']);
    expect(f.queue.calls).toEqual(['enqueue:normal']);
    expect(f.idempotency.calls).toEqual([]);
  });

  it('writes the record before it enqueues, with the retention TTL', async () => {
    const f = fakeIngest({ now: () => Date.parse('2026-01-01T00:00:00Z') });
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text', { priority: 'high' }));
    const record = f.messages.records.get(id);
    expect(record).toMatchObject({
      status: 'queued',
      priority: 'high',
      apiKey: 'ops-key',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(record?.expiresAt).toBe(Date.parse('2026-01-31T00:00:00Z') / 1000);
    expect(f.queue.sent[0]).toMatchObject({ lane: 'high', message: { id } });
  });

  it('claims the Idempotency-Key for idempotencyHours from the config', async () => {
    const f = fakeIngest({ config: fakeConfig({ idempotencyHours: 2 }) });
    await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
    expect([...f.idempotency.entries.values()][0]?.ttlMs).toBe(2 * 3600_000);
  });

  it('answers 503, marks the record failed and releases the key when the enqueue fails', async () => {
    const f = fakeIngest();
    f.queue.fail = true;

    const err = await ingestError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));

    expect(err.code).toBe('unavailable');
    const [record] = f.messages.records.values();
    expect(record?.status).toBe(STATUS.failed);
    expect(record?.error?.code).toBe('enqueue_failed');
    expect(f.idempotency.entries.size).toBe(0);
    // The retry with the same key is a fresh attempt, not a replay of the failed one.
    f.queue.fail = false;
    const retry = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
    expect(retry.id).not.toBe(record?.id);
  });

  it('answers 503 and enqueues nothing when the record cannot be written', async () => {
    const f = fakeIngest();
    f.messages.failCreate = true;
    expect((await ingestError(submitMessage(f.deps, apiKey, messageBody('text')))).code).toBe('unavailable');
    expect(f.queue.calls).toEqual([]);
  });

  it('answers 400 on callback_url when the guard finds an unsafe target, before claiming the key', async () => {
    const f = fakeIngest({
      urlGuard: {
        assertSafe: async (url) => {
          throw new UnsafeUrlError('host x resolves to a private address (10.0.0.1)', url);
        },
      },
    });
    const err = await ingestError(
      submitMessage(f.deps, apiKey, messageBody('text', { callback_url: 'https://x/' }), 'key-1'),
    );
    expect(err.code).toBe('invalid_message');
    expect(err.details).toEqual([
      { field: 'callback_url', message: 'host x resolves to a private address (10.0.0.1)' },
    ]);
    expect(f.idempotency.calls).toEqual([]);
    expect(f.messages.calls).toEqual([]);
  });

  it('answers 503 when DNS cannot answer for callback_url right now', async () => {
    const f = fakeIngest({
      urlGuard: {
        assertSafe: async () => {
          throw new LookupUnavailableError('hooks.example.com');
        },
      },
    });
    const err = await ingestError(
      submitMessage(f.deps, apiKey, messageBody('text', { callback_url: 'https://hooks.example.com/' })),
    );
    expect(err.code).toBe('unavailable');
  });

  it('defaults the guard from the config: loopback is refused unless allowLoopbackWebhooks', async () => {
    const { urlGuard: _none, ...strict } = fakeIngest().deps;
    const body = messageBody('text', { callback_url: 'https://127.0.0.1/hook' });
    expect((await ingestError(submitMessage(strict, apiKey, body))).code).toBe('invalid_message');
    const { urlGuard: _none2, ...local } = fakeIngest({
      config: fakeConfig({ allowLoopbackWebhooks: true }),
    }).deps;
    await expect(submitMessage(local, apiKey, body)).resolves.toMatchObject({ status: 'queued' });
  });

  it('accepts a message whose record write was retried after a lost answer (the record exists: it is ours)', async () => {
    const f = fakeIngest();
    f.messages.createAnswerLost = true;
    const res = await submitMessage(f.deps, apiKey, messageBody('text'));
    expect(res.status).toBe('queued');
    expect(f.queue.sent.map((s) => s.message.id)).toEqual([res.id]);
    expect(f.messages.records.get(res.id)?.status).toBe('queued');
  });

  it('queues markdown of an app with markdownFallback as that fallback (single and batch), unless the message says none', async () => {
    const config = fakeConfig();
    config.apps.ops = { ...(config.apps.ops as (typeof config.apps)[string]), markdownFallback: 'text' };
    const f = fakeIngest({ config });
    const markdown = { msgtype: 'markdown', markdown: { content: '## Backup\n**done** in 3 min' } };

    const converted = await submitMessage(f.deps, apiKey, messageBody('markdown', markdown));
    const kept = await submitMessage(
      f.deps,
      apiKey,
      messageBody('markdown', { ...markdown, markdown_fallback: 'none' }),
    );
    const [batched] = await submitBatch(f.deps, apiKey, { messages: [messageBody('markdown', markdown)] });
    const plain = fakeIngest();
    const other = await submitMessage(plain.deps, apiKey, messageBody('markdown', markdown));

    expect(f.messages.records.get(converted.id)?.request).toMatchObject({
      msgtype: 'text',
      content: { content: 'Backup\ndone in 3 min' },
    });
    expect(f.messages.records.get(kept.id)?.request.msgtype).toBe('markdown');
    expect(f.messages.records.get((batched as { id: string }).id)?.request.msgtype).toBe('text');
    expect(plain.messages.records.get(other.id)?.request.msgtype).toBe('markdown');
  });
});

describe('submitBatch', () => {
  const unqueued = expect.objectContaining({
    code: 'unavailable',
    message: 'could not queue the message; retry',
    details: [],
  });

  it('sends 25 valid messages of one lane as SendMessageBatch calls of 10, 10 and 5', async () => {
    const f = fakeIngest();
    const batches: number[] = [];
    const sqs = {
      send: async (command: unknown) => {
        if (command instanceof SendMessageBatchCommand) batches.push(command.input.Entries?.length ?? 0);
        return {};
      },
    };
    const deps = {
      ...f.deps,
      queue: new SqsMessageQueue(sqs as never, { high: 'q-high', normal: 'q-normal' }),
    };
    const messages = Array.from({ length: 25 }, (_, i) => messageBody('text', { touser: `u${i}` }));

    const results = await submitBatch(deps, apiKey, { messages });

    expect(results.every((r) => 'id' in r)).toBe(true);
    expect(batches.sort()).toEqual([10, 10, 5].sort());
    // Records in one batch write (BatchWriteItem chunks of 25 in the DynamoDB store), never one write per item.
    expect(f.messages.calls).toEqual(['createBatch:25']);
  });

  it('reports unqueued items as unavailable and marks their records failed', async () => {
    const f = fakeIngest();
    f.queue.fail = true;
    const results = await submitBatch(f.deps, apiKey, { messages: [messageBody('text'), 7] });
    expect(results).toEqual([
      { index: 0, error: unqueued },
      { index: 1, error: expect.objectContaining({ code: 'invalid_message' }) },
    ]);
    expect([...f.messages.records.values()].map((r) => r.status)).toEqual(['failed']);
  });

  it('neither enqueues nor reports as queued an item whose record was not written', async () => {
    const f = fakeIngest();
    f.messages.unwrittenInBatch = 1;
    const results = await submitBatch(f.deps, apiKey, {
      messages: [messageBody('text', { touser: 'a' }), messageBody('text', { touser: 'b' })],
    });
    expect(results[0]).toEqual({ index: 0, error: unqueued });
    expect(results[1]).toMatchObject({ index: 1, status: 'queued' });
    expect(f.queue.sent.map((s) => s.message.id)).toEqual([(results[1] as { id: string }).id]);
  });

  it('fails a record reported not written that was written after all, so it never stays queued unqueued', async () => {
    const f = fakeIngest();
    f.messages.unwrittenInBatch = 1;
    f.messages.unwrittenStoredAnyway = true;
    const results = await submitBatch(f.deps, apiKey, {
      messages: [messageBody('text'), messageBody('text')],
    });
    const [first] = f.messages.records.values();
    expect(results[0]).toMatchObject({ error: { code: 'unavailable' } });
    expect(first).toMatchObject({ status: STATUS.failed, error: { code: 'store_failed' } });
    expect(f.queue.sent.map((x) => x.message.id)).not.toContain(first?.id);
  });

  it('answers every item unavailable when the records cannot be written at all', async () => {
    const f = fakeIngest();
    f.messages.failCreate = true;
    const results = await submitBatch(f.deps, apiKey, {
      messages: [messageBody('text'), messageBody('text')],
    });
    expect(results.map((r) => ('error' in r ? (r.error as IngestError).code : r.status))).toEqual([
      'unavailable',
      'unavailable',
    ]);
    expect(f.queue.sent).toEqual([]);
  });

  it('rejects unknown top-level fields instead of ignoring them', async () => {
    const f = fakeIngest();
    const err = await ingestError(
      submitBatch(f.deps, apiKey, { messages: [messageBody('text')], priority: 'high' }),
    );
    expect(err.details).toEqual([{ field: 'priority', message: 'unknown field' }]);
  });
});
