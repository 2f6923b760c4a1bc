import * as v from 'valibot';
// Deep imports: the webhooks index would pull the undici client into every function's bundle.
import { WEBHOOK_EVENT_TYPES } from '#lib/webhooks/payloads.js';
import { parseWebhookSecret, WEBHOOK_SECRET_PREFIX } from '#lib/webhooks/signature.js';

const positiveInt = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.minValue(1, 'must be >= 1'),
);

/**
 * How long the sender keeps trying (SPEC §4; docs/concepts/delivery.md). `budgetSeconds`: retries and waits of a
 * message end this long after acceptance (then `dead`; a message's own `ttl_seconds` may end it sooner, `expired`).
 * `configErrorHoldSeconds`: while WeCom answers a configuration errcode (wrong secret, IP not trusted…) messages
 * wait this long for the operator's fix, then fail. `duplicateCheckSeconds`: WeCom's duplicate_check_interval every
 * message carries unless it opts out (`duplicate_protection: false`): identical content to the same recipients
 * within it is delivered once, and a resend after a lost answer is safe for that long.
 */
export const DELIVERY_DEFAULTS = {
  budgetSeconds: 86_400,
  configErrorHoldSeconds: 3_600,
  duplicateCheckSeconds: 3_600,
} as const;

export const DeliverySchema = v.strictObject({
  budgetSeconds: v.optional(
    v.pipe(positiveInt, v.maxValue(14 * 86_400, 'must be <= 1209600 (the queues keep a message 14 days)')),
    DELIVERY_DEFAULTS.budgetSeconds,
  ),
  configErrorHoldSeconds: v.optional(
    v.pipe(positiveInt, v.maxValue(14 * 86_400, 'must be <= 1209600')),
    DELIVERY_DEFAULTS.configErrorHoldSeconds,
  ),
  duplicateCheckSeconds: v.optional(
    v.pipe(positiveInt, v.maxValue(14_400, "WeCom's duplicate_check_interval is at most 14400 (4 h)")),
    DELIVERY_DEFAULTS.duplicateCheckSeconds,
  ),
});

const GENERATE_SECRET_HINT = `generate one with: npx wecom-gateway keys webhook-secret`;

/** A `whsec_` secret (Standard Webhooks); the message never echoes the value. */
const WhsecSchema = v.pipe(
  v.string('must be a string'),
  v.check((s) => {
    try {
      parseWebhookSecret(s);
      return true;
    } catch {
      return false;
    }
  }, `must be "${WEBHOOK_SECRET_PREFIX}" + base64 of 24-64 random bytes; ${GENERATE_SECRET_HINT}`),
);

/**
 * The signing secrets of a `webhook` block: `secrets` (the current one first; a second one during a rotation), or
 * the older single `secret`. A `secret` that is not in `whsec_` form (written before webhooks were signed) keeps
 * working as the raw HMAC key: it is the same as `whsec_` + base64 of its UTF-8 bytes, which is what receivers
 * using a Standard Webhooks library must be given.
 */
export function webhookSecretsOf(block: { secret?: string; secrets?: string[] }): string[] {
  if (block.secrets) return block.secrets;
  if (block.secret === undefined) return [];
  if (block.secret.startsWith(WEBHOOK_SECRET_PREFIX)) return [block.secret];
  return [`${WEBHOOK_SECRET_PREFIX}${Buffer.from(block.secret, 'utf8').toString('base64')}`];
}

export const WebhookSchema = v.pipe(
  v.strictObject({
    /** Default target for messages that set no callback_url (https; checked again at connect time). */
    url: v.optional(
      v.pipe(v.string(), v.url('must be an absolute URL'), v.startsWith('https://', 'must use https')),
    ),
    /** Signing secrets, current first; two while a rotation is under way (receivers accept either). */
    secrets: v.optional(
      v.pipe(
        v.array(WhsecSchema),
        v.minLength(1, 'must hold 1 or 2 secrets'),
        v.maxLength(2, 'must hold 1 or 2 secrets (current and previous)'),
      ),
    ),
    /** Older single secret; see {@link webhookSecretsOf}. */
    secret: v.optional(
      v.pipe(
        v.string('must be a string'),
        v.check((s) => {
          if (s.startsWith(WEBHOOK_SECRET_PREFIX)) return v.is(WhsecSchema, s);
          const bytes = Buffer.byteLength(s, 'utf8');
          return bytes >= 24 && bytes <= 64;
        }, `must be a whsec_ secret (or 24-64 bytes used as the raw key); ${GENERATE_SECRET_HINT}`),
      ),
    ),
    /** Ports a target may use besides 443. */
    allowedPorts: v.optional(
      v.array(
        v.pipe(
          v.number('must be a number'),
          v.integer('must be an integer'),
          v.minValue(1, 'must be 1-65535'),
          v.maxValue(65535, 'must be 1-65535'),
        ),
      ),
      [],
    ),
    /** The webhook events sent; default all. */
    events: v.optional(
      v.array(v.picklist(WEBHOOK_EVENT_TYPES, `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`)),
      [...WEBHOOK_EVENT_TYPES],
    ),
  }),
  v.check((w) => !(w.secret !== undefined && w.secrets !== undefined), 'give secrets or secret, not both'),
  v.transform(({ secret, secrets, ...rest }) => ({
    ...rest,
    secrets: webhookSecretsOf({ secret, secrets }),
  })),
);
