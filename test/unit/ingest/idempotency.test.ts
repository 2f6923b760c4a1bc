import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { submitMessage } from '#lib/ingest/index.js';
import { STATUS } from '#lib/model/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { messageRecord } from '#test/helpers/message-records.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const apiKey = opsApiKey();

describe('submitMessage with a replayed Idempotency-Key', () => {
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
    expect((await ingestError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'))).code).toBe(
      'unavailable',
    );
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
    await ingestError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));
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

    const err = await ingestError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));

    expect(err.code).toBe('unavailable');
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
    await ingestError(submitMessage(f.deps, apiKey, messageBody('text'), 'key-1'));
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
