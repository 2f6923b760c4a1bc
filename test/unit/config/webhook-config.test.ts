import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '#lib/config/index.js';
import { generateWebhookSecret, signWebhook, verifyWebhook } from '#lib/webhooks/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const withWebhook = (webhook: Record<string, unknown>) => {
  const input = minimalConfig();
  (input.apps.ops as Record<string, unknown>).webhook = webhook;
  return input;
};

function issues(input: unknown): readonly { field: string; message: string }[] {
  try {
    parseConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error('parseConfig accepted the input');
}

describe('apps.<app>.webhook', () => {
  it('fills the defaults: no secrets, no extra ports, every event', () => {
    const config = parseConfig(withWebhook({ url: 'https://hooks.example.com/wecom' }));

    expect(config.apps.ops?.webhook).toEqual({
      url: 'https://hooks.example.com/wecom',
      secrets: [],
      allowedPorts: [],
      events: [
        'message.sent',
        'message.failed',
        'message.dead',
        'message.expired',
        'message.recalled',
        'message.canceled',
        'wecom.event',
      ],
    });
  });

  it('takes two whsec_ secrets (a rotation) and parses its own output again unchanged', () => {
    const secrets = [generateWebhookSecret(), generateWebhookSecret()];

    const config = parseConfig(withWebhook({ secrets, allowedPorts: [8443], events: ['wecom.event'] }));

    expect(config.apps.ops?.webhook).toMatchObject({
      secrets,
      allowedPorts: [8443],
      events: ['wecom.event'],
    });
    expect(parseConfig(config)).toEqual(config);
  });

  it('refuses a third secret, a secret that is not whsec_, and never echoes the secret', () => {
    const bad = 'whsec_tooshort';
    const three = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];

    expect(issues(withWebhook({ secrets: three })).map((i) => i.field)).toEqual(['apps.ops.webhook.secrets']);
    const found = issues(withWebhook({ secrets: [bad] }));
    expect(found.map((i) => i.field)).toEqual(['apps.ops.webhook.secrets.0']);
    expect(JSON.stringify(found)).not.toContain('tooshort');
  });

  it('keeps an older single `secret` working: whsec_ as is, anything else as the raw HMAC key', () => {
    const whsec = generateWebhookSecret();
    const legacy = 'a-long-shared-secret-from-2025-config';

    const a = parseConfig(withWebhook({ secret: whsec }));
    const b = parseConfig(withWebhook({ secret: legacy }));

    expect(a.apps.ops?.webhook?.secrets).toEqual([whsec]);
    // A receiver given the raw string (as key bytes) verifies what the normalised secret signs.
    const normalised = b.apps.ops?.webhook?.secrets ?? [];
    const headers = signWebhook({ id: 'wh_1', timestamp: 1_800_000_000, body: '{}' }, normalised);
    const asWhsec = `whsec_${Buffer.from(legacy).toString('base64')}`;
    expect(normalised).toEqual([asWhsec]);
    expect(() =>
      verifyWebhook({
        body: '{}',
        headers: { ...headers },
        secrets: [asWhsec],
        now: () => 1_800_000_000_000,
      }),
    ).not.toThrow();
  });

  it('refuses a short legacy secret, both secret and secrets, an http url, a bad port and an unknown event', () => {
    expect(issues(withWebhook({ secret: 'short' })).map((i) => i.field)).toEqual(['apps.ops.webhook.secret']);
    expect(
      issues(withWebhook({ secret: generateWebhookSecret(), secrets: [generateWebhookSecret()] })),
    ).toEqual([{ field: 'apps.ops.webhook', message: 'give secrets or secret, not both' }]);
    expect(issues(withWebhook({ url: 'http://hooks.example.com/' })).map((i) => i.field)).toEqual([
      'apps.ops.webhook.url',
    ]);
    expect(issues(withWebhook({ allowedPorts: [0] })).map((i) => i.field)).toEqual([
      'apps.ops.webhook.allowedPorts.0',
    ]);
    expect(issues(withWebhook({ events: ['message.queued'] })).map((i) => i.field)).toEqual([
      'apps.ops.webhook.events.0',
    ]);
  });
});
