import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { WebhookSecretError, WebhookVerificationError } from './errors.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, spec 1.0.0, "Signature scheme" and "Webhook
 * headers"): the signed content is `{webhook-id}.{webhook-timestamp}.{body}`, HMAC-SHA256 with the secret's
 * base64-decoded key, sent as `v1,<base64>`. Several secrets (rotation: the new one and the old one, both valid
 * for a while) give several space-separated signatures; a receiver accepts the webhook if any one matches.
 */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** "Random. At least 24 bytes (192 bits, 512 maximum)" — the spec's symmetric secret. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** The spec: id and timestamp must not contain `.` (the separator); ours are also header-safe. */
const WEBHOOK_ID = /^[A-Za-z0-9_-]{1,128}$/;
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/**
 * The HMAC key of a `whsec_…` secret.
 * @throws WebhookSecretError naming what is wrong, never echoing the secret
 */
export function parseWebhookSecret(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new WebhookSecretError(`webhook secrets start with "${WEBHOOK_SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES || key.toString('base64') !== encoded) {
    throw new WebhookSecretError(
      `a webhook secret is "${WEBHOOK_SECRET_PREFIX}" + base64 of ${MIN_KEY_BYTES}-${MAX_KEY_BYTES} random bytes`,
    );
  }
  return key;
}

/**
 * A fresh secret for an app's config (32 random bytes).
 * @example generateWebhookSecret() // 'whsec_3q2+7w…'
 */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The three Standard Webhooks headers for `body`, signed with every secret in `secrets` (current first).
 * `body` must be sent byte for byte as signed.
 *
 * @example
 * const body = JSON.stringify(payload);
 * const headers = signWebhook({ id: 'wh_01J…', timestamp: Math.floor(Date.now() / 1000), body }, [current, previous]);
 */
export function signWebhook(
  message: { id: string; timestamp: number; body: string | Uint8Array },
  secrets: readonly string[],
): WebhookHeaders {
  if (!WEBHOOK_ID.test(message.id)) throw new TypeError('webhook id must be 1-128 of [A-Za-z0-9_-]');
  if (!Number.isSafeInteger(message.timestamp) || message.timestamp < 0) {
    throw new TypeError('webhook timestamp must be whole Unix seconds');
  }
  if (secrets.length === 0) throw new WebhookSecretError('at least one webhook secret is needed');
  const signatures = secrets.map(
    (secret) =>
      `v1,${hmac(parseWebhookSecret(secret), message.id, message.timestamp, message.body).toString('base64')}`,
  );
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

export interface VerifyWebhookInput {
  /** The raw body as received — before any JSON parsing. */
  body: string | Uint8Array;
  /** Request headers; names are matched case-insensitively. */
  headers: Record<string, string | readonly string[] | undefined>;
  /** Secrets the receiver trusts (during rotation, both). */
  secrets: readonly string[];
  /** Default 300 s, as the spec's reference libraries. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

/**
 * Verifies a received webhook the way the spec asks receivers to: all three headers present, timestamp within
 * the tolerance (replays), and at least one `v1` signature equal — compared in constant time — to the HMAC under
 * one of the trusted secrets. Other versions (`v1a`, future ones) are skipped, not failed.
 *
 * @returns the webhook id (the receiver's idempotency key) and timestamp
 * @throws WebhookVerificationError
 * @example verifyWebhook({ body: rawBody, headers: req.headers, secrets: [process.env.WEBHOOK_SECRET] })
 */
export function verifyWebhook(input: VerifyWebhookInput): { id: string; timestamp: number } {
  const header = (name: keyof WebhookHeaders): string => {
    const entry = Object.entries(input.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    const value = Array.isArray(entry) ? entry[0] : entry;
    if (typeof value !== 'string' || value === '')
      throw new WebhookVerificationError(`missing ${name} header`);
    return value;
  };
  const id = header('webhook-id');
  const timestampText = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!/^\d{1,12}$/.test(timestampText))
    throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((input.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  }
  const expected = input.secrets.map((secret) => hmac(parseWebhookSecret(secret), id, timestamp, input.body));
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',', 2);
    if (version !== 'v1' || !encoded) continue;
    const given = Buffer.from(encoded, 'base64');
    if (expected.some((mac) => mac.length === given.length && timingSafeEqual(mac, given))) {
      return { id, timestamp };
    }
  }
  throw new WebhookVerificationError('no matching signature');
}

function hmac(key: Buffer, id: string, timestamp: number, body: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}
