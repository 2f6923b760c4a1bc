// Deep imports, of the errors only: the callback modules' indexes hold the XML parser, which the ingest bundle must
// not carry, and the hooks' and ingest's indexes the code of routes that the ingest function loads on first use.
import { CallbackError } from '#lib/callback/errors.js';
import { HookError, type HookErrorCode } from '#lib/hooks/errors.js';
import { IngestError, type IngestErrorCode } from '#lib/ingest/errors.js';
import { CallbackAppNotFoundError } from '#lib/receipts/errors.js';
import { HttpError, type HttpErrorCode } from './errors.js';

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /** The body is base64 (binary files such as the console's assets); API Gateway decodes it. */
  isBase64Encoded?: boolean;
}

export const json = (
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(body),
});

/** The error object of every error response (SPEC §2); `details` is always an array, possibly empty. */
export interface ErrorBody {
  code: string;
  message: string;
  details: readonly unknown[];
}

/** Codes of the callback verifier's errors (lib/callback errors.ts): WeCom retries any answer but 200. */
type CallbackErrorCode =
  | 'callback_error'
  | 'bad_request'
  | 'body_too_large'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'corp_mismatch'
  | 'bad_ciphertext'
  | 'bad_xml';

/**
 * The HTTP status of every error code a response can carry: the one place where errors get their status. The type
 * makes a new domain code without a row here fail to compile.
 */
const STATUS_OF_CODE = {
  invalid_json: 400,
  invalid_idempotency_key: 400,
  idempotency_not_supported: 400,
  invalid_request: 400,
  invalid_message: 400,
  hook_payload_invalid: 400,
  hook_template_empty: 400,
  unauthorized: 401,
  hook_signature_missing: 401,
  hook_signature_invalid: 401,
  forbidden: 403,
  not_found: 404,
  idempotency_conflict: 409,
  not_recallable: 409,
  not_cancelable: 409,
  recall_window_passed: 409,
  app_not_configured: 409,
  wecom_recall_failed: 409,
  not_updatable: 409,
  no_response_code: 409,
  response_code_invalid: 409,
  wecom_card_update_failed: 409,
  not_redrivable: 409,
  wecom_ip_not_trusted: 409,
  wecom_reach_failed: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unavailable: 503,
  // WeCom callbacks: nothing is stored for any of these.
  callback_error: 400,
  bad_request: 400,
  bad_xml: 400,
  bad_signature: 401,
  stale_timestamp: 401,
  corp_mismatch: 401,
  bad_ciphertext: 401,
  body_too_large: 413,
} as const satisfies Record<IngestErrorCode | HookErrorCode | HttpErrorCode | CallbackErrorCode, number>;

/** 401 names the scheme (RFC 9110 §11.6.1); 503 tells clients the request may be retried at once. */
const HEADERS_OF_STATUS: Partial<Record<number, Record<string, string>>> = {
  401: { 'www-authenticate': 'Bearer' },
  503: { 'retry-after': '1' },
};

/**
 * True for the errors the store and queue adapters raise when DynamoDB or SQS cannot be reached, fail on their side
 * or throttle (after the SDK's retries): the request can be retried as it is.
 */
export const isServiceUnavailable = (err: unknown): boolean =>
  err instanceof Error &&
  'code' in err &&
  (err.code === 'store_unavailable' || err.code === 'queue_unavailable');

const SERVICE_UNAVAILABLE: ErrorBody = {
  code: 'unavailable',
  message: 'a storage or queue service is unavailable right now; nothing was changed, retry',
  details: [],
};
const INTERNAL_ERROR: ErrorBody = { code: 'internal_error', message: 'internal error', details: [] };

/** The status and body of a known error; undefined for anything else (a 500). */
function known(err: unknown): { status: number; body: ErrorBody } | undefined {
  if (err instanceof IngestError || err instanceof HookError || err instanceof HttpError) {
    return {
      status: STATUS_OF_CODE[err.code],
      body: { code: err.code, message: err.message, details: err.details },
    };
  }
  if (err instanceof CallbackError || err instanceof CallbackAppNotFoundError) {
    const code = (err.code in STATUS_OF_CODE ? err.code : 'callback_error') as
      | CallbackErrorCode
      | 'not_found';
    return { status: STATUS_OF_CODE[code], body: { code, message: err.message, details: [] } };
  }
  if (isServiceUnavailable(err)) return { status: 503, body: SERVICE_UNAVAILABLE };
  return undefined;
}

/** The `error` object for a known error; anything else becomes the generic internal error. */
export const toErrorBody = (err: unknown): ErrorBody => known(err)?.body ?? INTERNAL_ERROR;

/**
 * Known errors → their 4xx/503 body; DynamoDB or SQS unavailable → 503 with Retry-After; anything else → a
 * generic 500 whose details stay in the log.
 *
 * @example request.response = toErrorResponse(err);
 */
export function toErrorResponse(err: unknown): HttpResponse {
  const k = known(err);
  const status = k?.status ?? 500;
  return json(status, { error: k?.body ?? INTERNAL_ERROR }, HEADERS_OF_STATUS[status] ?? {});
}
