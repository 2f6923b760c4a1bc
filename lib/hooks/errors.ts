import { HttpError } from '#lib/http/index.js';
import type { ValidationIssue } from '#lib/messages/index.js';

/**
 * Errors of inbound hooks. They carry their HTTP meaning (lib/http maps every HttpError in one place), so the
 * handler needs no mapping of its own: a payload the source cannot read is a 400 naming the fields, a missing or
 * wrong signature a 401. Codes are stable; branch on them across modules.
 */
export class HookError extends HttpError {
  override readonly name: string = 'HookError';
}

/** 400: the body is not JSON, not this vendor's payload, or a template rendered nothing. */
export class HookPayloadError extends HookError {
  override readonly name = 'HookPayloadError';
  constructor(message: string, issues: readonly ValidationIssue[] = [], code = 'hook_payload_invalid') {
    super(400, code, message, issues);
  }
}

/** 401: a secret is configured for the hook, and the request's signature or token header is missing or wrong. */
export class HookSignatureError extends HookError {
  override readonly name = 'HookSignatureError';
  constructor(
    readonly header: string,
    missing: boolean,
  ) {
    super(
      401,
      missing ? 'hook_signature_missing' : 'hook_signature_invalid',
      missing
        ? `${header} is required: a secret is configured for this hook`
        : `${header} does not match the secret configured for this hook`,
    );
  }
}
