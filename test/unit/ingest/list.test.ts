import { describe, expect, it } from 'vitest';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { encodeListCursor, listMessages } from '#lib/ingest/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');

const summary = {
  id: 'msg_01JH8X2Q4Z6V3K9M7N5P1R0S2T',
  app: 'ops',
  status: 'sent' as const,
  priority: 'high' as const,
  msgtype: 'text' as const,
  recipients: { touser: ['Alice'], toparty: ['2'], totag: [], omitted: 0 },
  attempts: 1,
  createdAt: '2026-12-01T08:00:00.000Z',
  updatedAt: '2026-12-01T08:00:00.120Z',
  sentAt: '2026-12-01T08:00:00.120Z',
};

describe('listMessages (GET /v1/messages)', () => {
  it('asks the store for one page of the filters and shows each entry like the status view', async () => {
    const f = fakeIngest({ now: () => NOW });
    f.messageList.page = { messages: [summary] };

    const view = await listMessages(f.deps, opsApiKey(), { status: 'sent', touser: 'ALICE', limit: '10' });

    expect(f.messageList.queries).toEqual([
      { channel: { kind: 'app', name: 'ops' }, statuses: ['sent'], touser: 'alice', limit: 10, now: NOW },
    ]);
    expect(view).toEqual({
      messages: [
        {
          id: summary.id,
          app: 'ops',
          status: 'sent',
          priority: 'high',
          msgtype: 'text',
          touser: ['Alice'],
          toparty: ['2'],
          totag: [],
          recipients_omitted: 0,
          attempts: 1,
          created_at: summary.createdAt,
          updated_at: summary.updatedAt,
          sent_at: summary.sentAt,
        },
      ],
      next_cursor: null,
    });
  });

  it('hands out a cursor that continues the same query where the page ended', async () => {
    const f = fakeIngest({ now: () => NOW });
    const next = { createdAt: summary.createdAt, id: summary.id };
    f.messageList.page = { messages: [summary], next };

    const first = await listMessages(f.deps, opsApiKey(), { msgtype: 'text' });
    await listMessages(f.deps, opsApiKey(), { msgtype: 'text', cursor: first.next_cursor as string });

    expect(first.next_cursor).toBe(
      encodeListCursor(next, { channel: { kind: 'app', name: 'ops' }, msgtype: 'text' }),
    );
    expect(f.messageList.queries[1]).toEqual({
      channel: { kind: 'app', name: 'ops' },
      msgtype: 'text',
      limit: 50,
      after: next,
      now: NOW,
    });
  });

  it('answers an app the key may not read with 403, the same as for an app that does not exist', async () => {
    const f = fakeIngest();
    for (const app of ['billing', 'nosuchapp']) {
      const err = await ingestError(listMessages(f.deps, opsApiKey(), { app }));
      expect(err.code).toBe('forbidden');
    }
    expect(f.messageList.queries).toEqual([]);
  });

  it('lists for a key of several apps only the app it names', async () => {
    const f = fakeIngest();
    const both: ApiKeyConfig = { ...opsApiKey(), apps: ['ops', 'billing'] };

    const err = await ingestError(listMessages(f.deps, both, {}));
    await listMessages(f.deps, both, { app: 'billing' });

    expect(err.code).toBe('invalid_request');
    expect(err.details).toEqual([expect.objectContaining({ field: 'app' })]);
    expect(f.messageList.queries.map((q) => q.channel)).toEqual([{ kind: 'app', name: 'billing' }]);
  });

  it('refuses a cursor of another app’s query, and a bad one, with a 400 naming cursor, reading nothing', async () => {
    const f = fakeIngest();
    const both: ApiKeyConfig = { ...opsApiKey(), apps: ['ops', 'billing'] };
    const billing = encodeListCursor(
      { createdAt: summary.createdAt, id: summary.id },
      {
        channel: { kind: 'app', name: 'billing' },
      },
    );

    for (const cursor of [billing, 'bogus', 'eyJ2IjoxfQ']) {
      const err = await ingestError(listMessages(f.deps, both, { app: 'ops', cursor }));
      expect(err.code).toBe('invalid_request');
      expect(err.details.map((d) => d.field)).toEqual(['cursor']);
    }
    expect(f.messageList.queries).toEqual([]);
  });
});
