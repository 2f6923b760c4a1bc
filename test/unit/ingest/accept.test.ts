import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { submitBatch, submitMessage } from '#lib/ingest/index.js';
import { fakeConfig, fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';

/** An mpnews WeCom accepts (content ≤ 666 KB) but the gateway cannot store in one item nor queue in one message. */
const bigMpnews = (contentBytes: number) =>
  messageBody('mpnews', {
    mpnews: {
      articles: [{ title: 'big', thumb_media_id: 'MEDIA', content: 'x'.repeat(contentBytes) }],
    },
  });

describe('acceptance: what every message carries', () => {
  it('fixes the app’s duplicate-check interval on the record and the queue body', async () => {
    const f = fakeIngest();

    const { id } = await submitMessage(f.deps, opsApiKey(), messageBody('text'));

    expect(f.messages.records.get(id)?.duplicateCheckSeconds).toBe(3600);
    expect(f.queue.sent[0]?.message.duplicateCheckSeconds).toBe(3600);
  });

  it('uses the client’s own interval, 0 for an opt-out, and the app’s configured one otherwise', async () => {
    const config = fakeConfig();
    const ops = config.apps.ops;
    if (!ops) throw new Error('no app');
    config.apps.ops = {
      ...ops,
      quota: { ...QUOTA_DEFAULTS },
      delivery: { budgetSeconds: 86_400, configErrorHoldSeconds: 3600, duplicateCheckSeconds: 900 },
    };
    const f = fakeIngest({ config });
    const own = await submitMessage(
      f.deps,
      opsApiKey(),
      messageBody('text', { enable_duplicate_check: 1, duplicate_check_interval: 120 }),
    );
    const wecomDefault = await submitMessage(
      f.deps,
      opsApiKey(),
      messageBody('text', { enable_duplicate_check: 1 }),
    );
    const optOut = await submitMessage(
      f.deps,
      opsApiKey(),
      messageBody('text', { duplicate_protection: false }),
    );
    const app = await submitMessage(f.deps, opsApiKey(), messageBody('text'));

    expect(
      [own, wecomDefault, optOut, app].map((a) => f.messages.records.get(a.id)?.duplicateCheckSeconds),
    ).toEqual([120, 1800, 0, 900]);
  });
});

describe('a message too large to store or queue', () => {
  it('answers 413 naming the largest field, and stores and queues nothing', async () => {
    const f = fakeIngest();

    const err = await ingestError(submitMessage(f.deps, opsApiKey(), bigMpnews(300_000)));

    expect(err.code).toBe('payload_too_large');
    expect(err.details).toEqual([
      { field: 'mpnews.articles[0].content', message: expect.stringContaining('300000 bytes') },
    ]);
    expect(f.messages.records.size).toBe(0);
    expect(f.queue.sent).toEqual([]);
  });

  it('answers 413 for that item of a batch and queues the others', async () => {
    const f = fakeIngest();

    const results = await submitBatch(f.deps, opsApiKey(), {
      messages: [messageBody('text'), bigMpnews(300_000), messageBody('text')],
    });

    expect(results.map((r) => ('error' in r ? (r.error as { code: string }).code : r.status))).toEqual([
      'queued',
      'payload_too_large',
      'queued',
    ]);
    expect(f.queue.sent).toHaveLength(2);
    expect(f.messages.records.size).toBe(2);
  });

  it('accepts a large message that still fits', async () => {
    const f = fakeIngest();

    await submitMessage(f.deps, opsApiKey(), bigMpnews(200_000));

    expect(f.queue.sent).toHaveLength(1);
  });
});
