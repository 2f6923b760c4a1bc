import type { ValidationIssue } from '#lib/messages/index.js';

/** The request itself is wrong; sent again unchanged it fails again. */
type InvalidRequestCode =
  | 'invalid_idempotency_key'
  | 'idempotency_not_supported'
  | 'invalid_request'
  | 'invalid_message';
/** The request is well formed but the message's state (or the key's history) does not allow it. */
type StateConflictCode =
  | 'idempotency_conflict'
  | 'not_recallable'
  | 'not_cancelable'
  | 'recall_window_passed'
  | 'app_not_configured'
  | 'wecom_recall_failed'
  | 'not_updatable'
  | 'no_response_code'
  | 'response_code_invalid'
  | 'wecom_card_update_failed'
  | 'not_redrivable'
  | 'wecom_ip_not_trusted'
  | 'wecom_reach_failed';

/** Every code an ingest error carries: stable, documented in docs/api.md, mapped to HTTP by lib/http alone. */
export type IngestErrorCode =
  | InvalidRequestCode
  | StateConflictCode
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'payload_too_large'
  | 'unavailable';

/**
 * Why ingest refused a request. Domain code throws these; only lib/http turns a code into an HTTP status, so the
 * same functions could serve a CLI or a queue-fed import.
 */
export class IngestError extends Error {
  override readonly name: string = 'IngestError';
  constructor(
    readonly code: IngestErrorCode,
    message: string,
    /** The fields at fault, when there are some. */
    readonly details: readonly ValidationIssue[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class InvalidRequestError extends IngestError {
  override readonly name = 'InvalidRequestError';
  constructor(code: InvalidRequestCode, message: string, details: readonly ValidationIssue[] = []) {
    super(code, message, details);
  }
}

/** No API key, or one the gateway does not know. */
export class UnauthenticatedError extends IngestError {
  override readonly name = 'UnauthenticatedError';
  constructor(message = 'missing or invalid API key (Authorization: Bearer <key>)') {
    super('unauthorized', message);
  }
}

/** The key may not do this (scope) or may not act for this app. */
export class AccessDeniedError extends IngestError {
  override readonly name = 'AccessDeniedError';
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** No such message, or one of an app the key may not read (the same answer, so ids do not leak). */
export class MessageNotFoundError extends IngestError {
  override readonly name = 'MessageNotFoundError';
  constructor(message: string) {
    super('not_found', message);
  }
}

export class StateConflictError extends IngestError {
  override readonly name = 'StateConflictError';
  constructor(code: StateConflictCode, message: string) {
    super(code, message);
  }
}

/** No such robot, or one the key may not use (the same answer, so robot names do not leak). */
export class RobotNotFoundError extends IngestError {
  override readonly name = 'RobotNotFoundError';
  constructor(message: string) {
    super('not_found', message);
  }
}

/** No such app, or one the key may not use (the same answer, so app names do not leak). */
export class AppNotFoundError extends IngestError {
  override readonly name = 'AppNotFoundError';
  constructor(message: string) {
    super('not_found', message);
  }
}

/** The message is valid for WeCom but too large to store and queue (413, naming the largest field). */
export class MessageTooLargeError extends IngestError {
  override readonly name = 'MessageTooLargeError';
  constructor(message: string, details: readonly ValidationIssue[]) {
    super('payload_too_large', message, details);
  }
}

/** Nothing was done, and the same request may succeed in a moment (a dependency is briefly unavailable). */
export class RetryLaterError extends IngestError {
  override readonly name = 'RetryLaterError';
  constructor(message: string, options?: ErrorOptions) {
    super('unavailable', message, [], options);
  }
}
