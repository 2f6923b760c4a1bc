import type { ValidationIssue } from '#lib/messages/index.js';

/** A delivery whose body the hook cannot turn into a message: not JSON, not this vendor's payload, or empty. */
type HookPayloadCode = 'hook_payload_invalid' | 'hook_template_empty';
/** A secret is configured for the hook and the request's signature or token header is missing or wrong. */
type HookSignatureCode = 'hook_signature_missing' | 'hook_signature_invalid';

/** Every code a hook error carries: stable, documented in docs/api.md, mapped to HTTP by lib/http alone. */
export type HookErrorCode = HookPayloadCode | HookSignatureCode;

/**
 * Why a hook delivery was refused. The adapters are pure and throw these; only lib/http turns a code into a status
 * (a payload error is a 400 naming the fields, a signature error a 401). Branch on `code` across modules.
 */
export class HookError extends Error {
  override readonly name: string = 'HookError';
  constructor(
    readonly code: HookErrorCode,
    message: string,
    /** The fields at fault, when there are some. */
    readonly details: readonly ValidationIssue[] = [],
  ) {
    super(message);
  }
}

/** The body is not JSON, not this vendor's payload, or a template rendered nothing. */
export class HookPayloadError extends HookError {
  override readonly name = 'HookPayloadError';
  constructor(
    message: string,
    issues: readonly ValidationIssue[] = [],
    code: HookPayloadCode = 'hook_payload_invalid',
  ) {
    super(code, message, issues);
  }
}

/** A secret is configured for the hook, and the request's signature or token header is missing or wrong. */
export class HookSignatureError extends HookError {
  override readonly name = 'HookSignatureError';
  constructor(
    readonly header: string,
    missing: boolean,
  ) {
    super(
      missing ? 'hook_signature_missing' : 'hook_signature_invalid',
      missing
        ? `${header} is required: a secret is configured for this hook`
        : `${header} does not match the secret configured for this hook`,
    );
  }
}
