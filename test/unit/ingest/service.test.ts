import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { HttpError } from '#lib/http/index.js';
import { getMessage, recallMessage, submitBatch, submitMessage } from '#lib/ingest/index.js';
import { STATUS } from '#lib/model/index.js';
import { LookupUnavailableError, UnsafeUrlError } from '#lib/net/index.js';
import { SqsMessageQueue } from '#lib/queue/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { fakeConfig, fakeIngest } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';
import { messageRecord } from '#test/helpers/unit-dynamo.js';

const apiKey = fakeConfig().apiKeys[0] as ApiKeyConfig;

const httpError = async (promise: Promise<unknown>): Promise<HttpError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  return expect.fail('expected an HttpError');
};

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

    const err = await httpError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));

    expect(err.status).toBe(503);
    const [record] = f.messages.records.values();
    expect(record?.status).toBe(STATUS.failed);
    expect(record?.error?.code).toBe('enqueue_failed');
    expect(f.idempotency.entries.size).toBe(0);
    // The retry with the same key is a fresh attempt, not a replay of the failed one.
    f.queue.fail = false;
    const retry = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
    expect(retry.id).not.toBe(record?.id);
  });

  describe('a replayed Idempotency-Key', () => {
    const oldId = () => `msg_${ulid(Date.now() - 60_000)}`;

    it('answers the first id at once when the first request was accepted (no record read)', async () => {
      const f = fakeIngest();
      const first = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
      f.messages.calls.length = 0;

      expect(await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1')).toEqual(first);
      expect(f.messages.calls).toEqual([]);
      expect(f.queue.sent).toHaveLength(1);
    });

    it('takes over a stale claim whose request failed and could not release the key, and accepts anew', async () => {
      const f = fakeIngest();
      f.messages.failCreate = true;
      f.idempotency.failRelease = true;
      f.deps.newId = oldId;
      expect((await httpError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'))).status).toBe(503);
      expect(f.idempotency.entries.size).toBe(1);
      f.messages.failCreate = false;
      f.idempotency.failRelease = false;
      delete f.deps.newId;

      const retry = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');

      expect(f.messages.records.get(retry.id)?.status).toBe(STATUS.queued);
      expect(f.queue.sent.map((x) => x.message.id)).toEqual([retry.id]);
      expect([...f.idempotency.entries.values()]).toMatchObject([{ messageId: retry.id, accepted: true }]);
    });

    it('never replays a 202 for a stored message that was not enqueued', async () => {
      const f = fakeIngest();
      // Stored, the enqueue failed (503), and the key could not be released: the record exists, unqueued.
      f.deps.newId = oldId;
      f.queue.fail = true;
      f.idempotency.failRelease = true;
      await httpError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));
      f.queue.fail = false;
      f.idempotency.failRelease = false;
      delete f.deps.newId;

      const retry = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');

      expect(f.queue.sent.map((x) => x.message.id)).toEqual([retry.id]);
    });

    it('waits for a first request still in flight and replays its id once it is accepted', async () => {
      const f = fakeIngest();
      const first = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
      // As if the first request had claimed the key but not finished: it is accepted 300 ms later.
      const [entry] = f.idempotency.entries.values();
      if (entry) entry.accepted = false;
      setTimeout(() => {
        if (entry) entry.accepted = true;
      }, 300);

      const replay = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');

      expect(replay).toEqual(first);
      expect(f.queue.sent).toHaveLength(1);
    });

    it('answers 503 (retry) while a recent first request is not accepted', async () => {
      const f = fakeIngest();
      const first = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
      const [entry] = f.idempotency.entries.values();
      if (entry) entry.accepted = false;

      const err = await httpError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));

      expect(err.status).toBe(503);
      expect([...f.idempotency.entries.values()].map((e) => e.messageId)).toEqual([first.id]);
      expect(f.queue.sent).toHaveLength(1);
    });

    it('replays the first id when its request ended unmarked but the sender has worked on its message', async () => {
      const f = fakeIngest();
      f.deps.newId = oldId;
      f.idempotency.failMarkAccepted = true;
      const first = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
      f.idempotency.failMarkAccepted = false;
      delete f.deps.newId;
      const record = f.messages.records.get(first.id);
      if (record) record.status = STATUS.sent;

      expect(await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1')).toEqual(first);
      expect(f.queue.sent).toHaveLength(1);
    });

    it('takes over an ended, unmarked claim whose record is still queued (a write applied, its answer lost)', async () => {
      const f = fakeIngest();
      f.deps.newId = oldId;
      f.messages.failCreate = true;
      f.idempotency.failRelease = true;
      await httpError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));
      // The write had been applied after all: the record exists, never queued.
      const stray = messageRecord({ id: [...f.idempotency.entries.values()][0]?.messageId as string });
      f.messages.records.set(stray.id, stray);
      f.messages.failCreate = false;
      f.idempotency.failRelease = false;
      delete f.deps.newId;

      const retry = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');

      expect(retry.id).not.toBe(stray.id);
      expect(f.queue.sent.map((x) => x.message.id)).toEqual([retry.id]);
      expect(f.messages.records.get(stray.id)).toMatchObject({
        status: STATUS.failed,
        error: { code: 'superseded' },
      });
    });

    it('still answers 202 when the key cannot be marked accepted (the message is queued)', async () => {
      const f = fakeIngest();
      f.idempotency.failMarkAccepted = true;
      const res = await submitMessage(f.deps, apiKey, messageBody('text'), 'key-1');
      expect(res.status).toBe('queued');
      expect(f.queue.sent.map((x) => x.message.id)).toEqual([res.id]);
    });
  });

  it('answers 503 and enqueues nothing when the record cannot be written', async () => {
    const f = fakeIngest();
    f.messages.failCreate = true;
    expect((await httpError(submitMessage(f.deps, apiKey, messageBody('text')))).status).toBe(503);
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
    const err = await httpError(
      submitMessage(f.deps, apiKey, messageBody('text', { callback_url: 'https://x/' }), 'key-1'),
    );
    expect(err.status).toBe(400);
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
    const err = await httpError(
      submitMessage(f.deps, apiKey, messageBody('text', { callback_url: 'https://hooks.example.com/' })),
    );
    expect(err.status).toBe(503);
  });

  it('defaults the guard from the config: loopback is refused unless allowLoopbackWebhooks', async () => {
    const { urlGuard: _none, ...strict } = fakeIngest().deps;
    const body = messageBody('text', { callback_url: 'https://127.0.0.1/hook' });
    expect((await httpError(submitMessage(strict, apiKey, body))).status).toBe(400);
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
});

describe('submitBatch', () => {
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
      {
        index: 0,
        error: { code: 'unavailable', message: 'could not queue the message; retry', details: [] },
      },
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
    expect(results[0]).toEqual({
      index: 0,
      error: { code: 'unavailable', message: 'could not queue the message; retry', details: [] },
    });
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
    expect(results.map((r) => ('error' in r ? r.error.code : r.status))).toEqual([
      'unavailable',
      'unavailable',
    ]);
    expect(f.queue.sent).toEqual([]);
  });

  it('rejects unknown top-level fields instead of ignoring them', async () => {
    const f = fakeIngest();
    const err = await httpError(
      submitBatch(f.deps, apiKey, { messages: [messageBody('text')], priority: 'high' }),
    );
    expect(err.details).toEqual([{ field: 'priority', message: 'unknown field' }]);
  });
});

describe('getMessage', () => {
  it('answers 404 for a message of an app the key does not list', async () => {
    const f = fakeIngest();
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    const record = f.messages.records.get(id);
    if (record) record.app = 'billing';
    expect((await httpError(getMessage(f.deps, apiKey, id))).status).toBe(404);
  });
});

describe('recallMessage', () => {
  const sentMessage = async (f: ReturnType<typeof fakeIngest>, sentAt: string) => {
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    const record = f.messages.records.get(id);
    if (!record) throw new Error('no record');
    Object.assign(record, { status: STATUS.sent, sentAt, wecom: { msgid: 'wecom-msgid-1' } });
    return id;
  };

  it('calls WeCom with the stored msgid and records recalled', async () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const f = fakeIngest({ now: () => now });
    const id = await sentMessage(f, '2026-01-01T11:00:00Z');

    expect(await recallMessage(f.deps, apiKey, id)).toEqual({ status: 'recalled' });

    expect(f.recalls).toEqual(['t0:wecom-msgid-1']);
    expect(f.messages.records.get(id)?.status).toBe('recalled');
  });

  it('answers 409 recall_window_passed after 24 hours without calling WeCom', async () => {
    const f = fakeIngest({ now: () => Date.parse('2026-01-02T11:00:01Z') });
    const id = await sentMessage(f, '2026-01-01T11:00:00Z');

    const err = await httpError(recallMessage(f.deps, apiKey, id));

    expect(err.status).toBe(409);
    expect(err.code).toBe('recall_window_passed');
    expect(f.recalls).toEqual([]);
  });

  it('refreshes the token once when WeCom says it expired, then retries', async () => {
    let calls = 0;
    const f = fakeIngest({
      wecomRecall: async () => {
        if (calls++ === 0) throw new WecomApiError(42001, 'access_token expired', 'message/recall');
      },
    });
    const id = await sentMessage(f, new Date().toISOString());

    await recallMessage(f.deps, apiKey, id);

    expect(f.tokenFetches()).toBe(2);
    expect(f.recalls).toEqual(['t0:wecom-msgid-1', 't1:wecom-msgid-1']);
  });

  it('answers 409 wecom_recall_failed for a permanent WeCom error and keeps the status', async () => {
    const f = fakeIngest({
      wecomRecall: async () => {
        throw new WecomApiError(40003, 'invalid userid', 'message/recall');
      },
    });
    const id = await sentMessage(f, new Date().toISOString());
    const err = await httpError(recallMessage(f.deps, apiKey, id));
    expect(err.code).toBe('wecom_recall_failed');
    expect(f.messages.records.get(id)?.status).toBe('sent');
  });

  it('answers 409 not_recallable for a queued message', async () => {
    const f = fakeIngest();
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    expect((await httpError(recallMessage(f.deps, apiKey, id))).code).toBe('not_recallable');
  });
});
