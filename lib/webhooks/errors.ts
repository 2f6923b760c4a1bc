/** Errors of the outbound-webhook module. Branch on `code` across module boundaries. */
export class WebhookError extends Error {
  override readonly name: string = 'WebhookError';
  readonly code: string = 'webhook_error';
}

/** A signing secret is not `whsec_` + base64 of 24–64 random bytes (Standard Webhooks, "Signature scheme"). */
export class WebhookSecretError extends WebhookError {
  override readonly name = 'WebhookSecretError';
  override readonly code = 'bad_webhook_secret';
}

/** A received webhook failed verification: missing headers, stale timestamp or no matching signature. */
export class WebhookVerificationError extends WebhookError {
  override readonly name = 'WebhookVerificationError';
  override readonly code = 'webhook_verification_failed';
}
