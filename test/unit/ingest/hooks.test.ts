import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '#lib/config/index.js';
import { receiveHook, receivePush, UnauthenticatedError } from '#lib/ingest/index.js';
import { sha256Hex } from '#lib/security/index.js';
import { fixture, hmacHex, hookConfig } from '#test/helpers/hook-fixtures.js';
import { fakeConfig, fakeIngest } from '#test/helpers/ingest-fakes.js';

const SECRET = 'gh-secret';

function config(over: Record<string, unknown> = {}): GatewayConfig {
  return fakeConfig({
    hooks: {
      gh: {
        ...hookConfig({ source: 'github', secret: SECRET, ...over }),
        tokenSha256: sha256Hex('gh-token'),
      },
    },
    pushKeys: [
      {
        name: 'cron',
        sha256: sha256Hex('SCT-cron-key'),
        app: 'ops',
        to: { touser: 'admin' },
        msgtype: 'markdown',
        priority: 'normal',
      },
    ],
  });
}

const body = fixture('github', 'issues.opened');
const delivery = (id: string) => ({
  rawBody: Buffer.from(body),
  headers: {
    'x-github-event': 'issues',
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${hmacHex(SECRET, body)}`,
  },
});

describe('receiveHook', () => {
  it('answers a wrong token and an unknown hook alike, before anything is read or stored', async () => {
    const f = fakeIngest({ config: config() });

    const errors = await Promise.all(
      [
        receiveHook(f.deps, 'gh', 'wrong', delivery('d1')),
        receiveHook(f.deps, 'nope', 'gh-token', delivery('d1')),
      ].map((p) => p.catch((err: unknown) => err)),
    );

    for (const err of errors) expect(err).toBeInstanceOf(UnauthenticatedError);
    expect((errors[0] as Error).message).toBe((errors[1] as Error).message);
    expect([f.messages.calls, f.queue.calls]).toEqual([[], []]);
  });

  it('accepts under the principal hook:<name>, keyed by the delivery', async () => {
    const f = fakeIngest({ config: config() });

    const receipt = await receiveHook(f.deps, 'gh', 'gh-token', delivery('d1'));

    expect(receipt).toMatchObject({
      status: 'queued',
      event: 'issues.opened',
      messages: [{ status: 'queued' }],
    });
    const [record] = f.messages.records.values();
    expect(record?.apiKey).toBe('hook:gh');
    expect([...f.idempotency.entries.keys()][0]).toMatch(/^hook:gh#/);
  });

  it("answers a redelivery with the first id even after the hook's rendering changed in between", async () => {
    const before = fakeIngest({ config: config() });
    const first = await receiveHook(before.deps, 'gh', 'gh-token', delivery('d2'));
    // The operator switched the hook to markdown between GitHub's delivery and its redelivery.
    const after = { ...before.deps, config: config({ msgtype: 'markdown' }) };

    const again = await receiveHook(after, 'gh', 'gh-token', delivery('d2'));

    expect(again.messages).toEqual(first.messages);
    expect(before.queue.sent).toHaveLength(1);
  });
});

describe('receivePush', () => {
  it('finds the push key with or without ServerChan’s .send suffix, and nothing for another key', async () => {
    const f = fakeIngest({ config: config() });

    const plain = await receivePush(f.deps, 'SCT-cron-key', { query: 'title=a' });
    const suffixed = await receivePush(f.deps, 'SCT-cron-key.send', { query: 'title=b' });
    const unknown = await receivePush(f.deps, 'SCT-other', { query: 'title=c' }).catch((err: unknown) => err);

    expect([plain.code, suffixed.data.pushid]).toEqual([0, suffixed.id]);
    expect(unknown).toBeInstanceOf(UnauthenticatedError);
    expect([...f.messages.records.values()].map((r) => r.apiKey)).toEqual(['push:cron', 'push:cron']);
  });
});
