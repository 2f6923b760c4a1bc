import { describe, expect, it } from 'vitest';
import { listEvents } from '#lib/ingest/index.js';
import { InvalidCursorError } from '#lib/store/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';

const NOW = Date.parse('2026-03-31T12:00:00Z');

describe('listEvents', () => {
  const harness = () => {
    const f = fakeIngest({ now: () => NOW });
    const calls: { app: string; since: string; opts: unknown }[] = [];
    f.deps.events = {
      listByMessage: async () => [],
      listByApp: async (app, since, opts) => {
        calls.push({ app, since, opts });
        if (opts.cursor === 'bad') throw new InvalidCursorError('cursor is not one this API handed out');
        return {
          events: [
            {
              id: 'msg:1',
              app,
              receivedAt: '2026-03-31T11:00:00.000Z',
              event: { kind: 'text', corpId: 'ww', from: 'alice', createTime: 1, msgId: '1', content: 'hi' },
            },
          ],
          cursor: 'next',
        };
      },
    };
    return { f, calls };
  };

  it('pages an app feed from `since` and hands back the cursor; the corp id is not shown', async () => {
    const { f, calls } = harness();

    const page = await listEvents(f.deps, opsApiKey(), {
      app: 'ops',
      since: '2026-03-30T00:00:00Z',
      limit: '5',
    });

    expect(page).toEqual({
      events: [
        {
          id: 'msg:1',
          app: 'ops',
          received_at: '2026-03-31T11:00:00.000Z',
          message_id: null,
          event: { kind: 'text', from: 'alice', create_time: 1, msg_id: '1', content: 'hi' },
        },
      ],
      next_cursor: 'next',
    });
    expect(calls[0]).toEqual({ app: 'ops', since: '2026-03-30T00:00:00.000Z', opts: { limit: 5, now: NOW } });
  });

  it('defaults to the last 24 h and reads no further back than the retention', async () => {
    const { f, calls } = harness();

    await listEvents(f.deps, opsApiKey(), { app: 'ops' });
    await listEvents(f.deps, opsApiKey(), { app: 'ops', since: '2020-01-01T00:00:00Z' });

    expect(calls.map((c) => c.since)).toEqual(['2026-03-30T12:00:00.000Z', '2026-03-01T12:00:00.000Z']);
  });

  it.each([
    [{ since: '2026-03-30T00:00:00Z' }, 'app'],
    [{ app: 'ops', since: 'yesterday' }, 'since'],
    [{ app: 'ops', limit: '0' }, 'limit'],
    [{ app: 'ops', limit: '501' }, 'limit'],
    [{ app: 'ops', cursor: 'bad' }, 'cursor'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const { f } = harness();

    const err = await ingestError(listEvents(f.deps, opsApiKey(), query));

    expect(err).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field })] });
  });

  it('answers 403 for an app the key may not read', async () => {
    const { f, calls } = harness();

    expect((await ingestError(listEvents(f.deps, opsApiKey(), { app: 'billing' }))).code).toBe('forbidden');
    expect(calls).toEqual([]);
  });
});
