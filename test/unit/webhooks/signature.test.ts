import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  parseWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookSecretError,
  WebhookVerificationError,
} from '#lib/webhooks/index.js';

// The Standard Webhooks reference library's own signing vector (libraries/javascript/src/webhook.test.ts,
// "sign function works"); the spec's example signature comes without its secret.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const CURRENT = generateWebhookSecret();
const PREVIOUS = generateWebhookSecret();
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('signWebhook', () => {
  it('reproduces the reference library’s vector', () => {
    const headers = signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, body: VECTOR.body }, [
      VECTOR.secret,
    ]);
    expect(headers).toEqual({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': VECTOR.signature,
    });
  });

  it('is verified by the standardwebhooks npm package, with either secret during a rotation', () => {
    const body = JSON.stringify({
      type: 'message.sent',
      timestamp: '2026-12-01T08:00:07.000Z',
      data: { id: 'm' },
    });
    const headers = signWebhook({ id: 'wh_abc', timestamp: nowSeconds(), body }, [CURRENT, PREVIOUS]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [CURRENT, PREVIOUS]) {
      expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it('signs bytes exactly as received (a UTF-8 body signs the same as its string)', () => {
    const body = '{"text":"你好 ✓"}';
    const message = { id: 'wh_1', timestamp: 1_790_000_000 };
    expect(signWebhook({ ...message, body: Buffer.from(body) }, [CURRENT])).toEqual(
      signWebhook({ ...message, body }, [CURRENT]),
    );
  });

  it.each(['wh.1', 'wh 1', '', 'x'.repeat(129)])(
    'refuses the webhook id %j (no separators, header-safe)',
    (id) => {
      expect(() => signWebhook({ id, timestamp: 1, body: '' }, [CURRENT])).toThrow(TypeError);
    },
  );

  it('refuses a fractional timestamp and an empty secret list', () => {
    expect(() => signWebhook({ id: 'a', timestamp: 1.5, body: '' }, [CURRENT])).toThrow(TypeError);
    expect(() => signWebhook({ id: 'a', timestamp: 1, body: '' }, [])).toThrow(WebhookSecretError);
  });
});

describe('parseWebhookSecret', () => {
  it('decodes the base64 after whsec_ (32 random bytes from generateWebhookSecret)', () => {
    expect(parseWebhookSecret(CURRENT)).toHaveLength(32);
    expect(parseWebhookSecret(VECTOR.secret)).toHaveLength(24);
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['fewer than 24 bytes', `whsec_${Buffer.alloc(16, 1).toString('base64')}`],
    ['more than 64 bytes', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
    ['not base64', 'whsec_not*base64*at*all*but*long*enough*'],
  ])('refuses a secret with %s, without echoing it', (_what, secret) => {
    let err: unknown;
    try {
      parseWebhookSecret(secret);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WebhookSecretError);
    expect((err as Error).message).not.toContain(secret.slice(6, 20));
  });
});

describe('verifyWebhook', () => {
  const signed = (secrets = [CURRENT], timestamp = nowSeconds(), body = '{"a":1}') => ({
    body,
    headers: { ...signWebhook({ id: 'wh_x', timestamp, body }, secrets) } as Record<string, string>,
  });

  it('accepts what the standardwebhooks package signs', () => {
    const body = '{"type":"wecom.event"}';
    const at = new Date();
    const signature = new Webhook(CURRENT).sign('msg_1', at, body);
    const headers = {
      'Webhook-Id': 'msg_1',
      'Webhook-Timestamp': String(Math.floor(at.getTime() / 1000)),
      'Webhook-Signature': signature,
    };
    expect(verifyWebhook({ body, headers, secrets: [CURRENT] })).toEqual({
      id: 'msg_1',
      timestamp: Math.floor(at.getTime() / 1000),
    });
  });

  it('accepts any one matching v1 signature among others, and a receiver that trusts only the old secret', () => {
    const { body, headers } = signed([CURRENT, PREVIOUS]);
    headers['webhook-signature'] =
      `v1a,AAAA v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${headers['webhook-signature']}`;
    expect(verifyWebhook({ body, headers, secrets: [PREVIOUS] }).id).toBe('wh_x');
  });

  it.each([
    ['a tampered body', (s: ReturnType<typeof signed>) => ({ ...s, body: '{"a":2}' })],
    ['another secret', (s: ReturnType<typeof signed>) => ({ ...s, secrets: [PREVIOUS] })],
    [
      'a missing signature',
      (s: ReturnType<typeof signed>) => ({ ...s, headers: { ...s.headers, 'webhook-signature': '' } }),
    ],
    [
      'a truncated signature',
      (s: ReturnType<typeof signed>) => ({
        ...s,
        headers: { ...s.headers, 'webhook-signature': s.headers['webhook-signature']?.slice(0, 12) ?? '' },
      }),
    ],
    [
      'a changed id',
      (s: ReturnType<typeof signed>) => ({ ...s, headers: { ...s.headers, 'webhook-id': 'wh_y' } }),
    ],
    [
      'a bad timestamp',
      (s: ReturnType<typeof signed>) => ({ ...s, headers: { ...s.headers, 'webhook-timestamp': 'soon' } }),
    ],
  ])('refuses %s', (_what, change) => {
    const input = { secrets: [CURRENT], ...change(signed()) };
    expect(() => verifyWebhook(input)).toThrow(WebhookVerificationError);
  });

  it('refuses a timestamp more than 5 minutes away (replay), either way', () => {
    for (const skew of [-301, 301]) {
      const s = signed([CURRENT], nowSeconds() + skew);
      expect(() => verifyWebhook({ ...s, secrets: [CURRENT] })).toThrow('tolerance');
    }
  });
});
