/** Codes of the errors the HTTP layer raises itself, before any domain code runs. */
export type HttpErrorCode = 'invalid_json' | 'payload_too_large' | 'unsupported_media_type' | 'not_found';

/**
 * An error of the HTTP layer itself: a body that is not JSON, too large, or a route that does not exist. Domain
 * errors (lib/ingest) are separate; lib/http maps both to responses in one table ({@link toErrorResponse}).
 */
export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  readonly details: readonly unknown[] = [];
  constructor(
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export class InvalidJsonError extends HttpError {
  override readonly name = 'InvalidJsonError';
  constructor(message: string) {
    super('invalid_json', message);
  }
}
export class PayloadTooLargeError extends HttpError {
  override readonly name = 'PayloadTooLargeError';
  constructor(limit: number) {
    super('payload_too_large', `request body exceeds ${limit} bytes`);
  }
}
export class UnsupportedMediaTypeError extends HttpError {
  override readonly name = 'UnsupportedMediaTypeError';
  constructor() {
    super('unsupported_media_type', 'send the body as JSON with Content-Type: application/json');
  }
}
export class RouteNotFoundError extends HttpError {
  override readonly name = 'RouteNotFoundError';
  constructor(routeKey: string) {
    super('not_found', `no route ${routeKey}`);
  }
}
