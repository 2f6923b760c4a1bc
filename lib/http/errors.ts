/** Errors with an HTTP meaning. Mapped to responses in exactly one place: {@link toErrorResponse}. */
export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly unknown[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export class BadRequestError extends HttpError {
  override readonly name = 'BadRequestError';
  constructor(code: string, message: string, details: readonly unknown[] = []) {
    super(400, code, message, details);
  }
}
export class UnauthorizedError extends HttpError {
  override readonly name = 'UnauthorizedError';
  constructor(message = 'missing or invalid API key (Authorization: Bearer <key>)') {
    super(401, 'unauthorized', message, [], { 'www-authenticate': 'Bearer' });
  }
}
export class ForbiddenError extends HttpError {
  override readonly name = 'ForbiddenError';
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}
export class NotFoundError extends HttpError {
  override readonly name = 'NotFoundError';
  constructor(message = 'not found') {
    super(404, 'not_found', message);
  }
}
export class ConflictError extends HttpError {
  override readonly name = 'ConflictError';
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}
export class PayloadTooLargeError extends HttpError {
  override readonly name = 'PayloadTooLargeError';
  constructor(limit: number) {
    super(413, 'payload_too_large', `request body exceeds ${limit} bytes`);
  }
}
export class UnsupportedMediaTypeError extends HttpError {
  override readonly name = 'UnsupportedMediaTypeError';
  constructor() {
    super(415, 'unsupported_media_type', 'send the body as JSON with Content-Type: application/json');
  }
}
export class ServiceUnavailableError extends HttpError {
  override readonly name = 'ServiceUnavailableError';
  constructor(message: string) {
    super(503, 'unavailable', message, [], { 'retry-after': '1' });
  }
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
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

/**
 * True for the errors the store and queue adapters raise when DynamoDB or SQS cannot be reached, fail on their side
 * or throttle (after the SDK's retries): the request can be retried as it is.
 */
export const isServiceUnavailable = (err: unknown): boolean =>
  err instanceof Error &&
  'code' in err &&
  (err.code === 'store_unavailable' || err.code === 'queue_unavailable');

const AWS_UNAVAILABLE = new ServiceUnavailableError(
  'a storage or queue service is unavailable right now; nothing was changed, retry',
);

/** The HTTP meaning of an error: itself when known, a 503 for an unavailable AWS service, else none (a 500). */
const asHttpError = (err: unknown): HttpError | undefined =>
  err instanceof HttpError ? err : isServiceUnavailable(err) ? AWS_UNAVAILABLE : undefined;

/** The `error` object for a known error; anything else becomes the generic internal error. */
export const toErrorBody = (err: unknown): ErrorBody => {
  const known = asHttpError(err);
  return known
    ? { code: known.code, message: known.message, details: known.details }
    : { code: 'internal_error', message: 'internal error', details: [] };
};

/**
 * Known errors → their 4xx/503 body; an AWS service that cannot be reached → 503 with Retry-After; anything else
 * → a generic 500 whose details stay in the log.
 */
export function toErrorResponse(err: unknown): HttpResponse {
  const known = asHttpError(err);
  return json(known?.status ?? 500, { error: toErrorBody(err) }, known?.headers ?? {});
}
