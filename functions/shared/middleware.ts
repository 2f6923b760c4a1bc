import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import {
  InvalidJsonError,
  isServiceUnavailable,
  PayloadTooLargeError,
  toErrorBody,
  toErrorResponse,
  UnsupportedMediaTypeError,
} from '#lib/http/index.js';
import { type Logger, type Metrics, runWithLogContext } from '#lib/observability/index.js';
import { routeOf } from '#lib/resources/index.js';
import { runWithDeadline } from '#lib/util/index.js';

/** `parsedBody`: a `json` route's body; `rawBody`: a `raw` route's exact bytes (API Gateway may base64 them). */
export type HttpEvent = APIGatewayProxyEventV2 & { parsedBody?: unknown; rawBody?: Buffer };

/** The body's bytes as the client sent them: HTTP APIs base64-encode bodies they do not take for text. */
export const bodyBytes = (event: HttpEvent): Buffer =>
  event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
type HttpMiddleware = MiddlewareObj<HttpEvent, APIGatewayProxyResultV2, Error, Context>;

/** Rejects malformed UTF-8 instead of silently turning it into U+FFFD (which would change the message). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Where errors become HTTP responses (lib/http maps them): known ones as 4xx/503, anything else as a 500 whose
 * details go only to the log. An unavailable AWS service is logged as an error too; a domain 503 as a warning.
 */
export const httpErrors = (logger: Logger): HttpMiddleware => ({
  onError: async (request) => {
    const err = request.error;
    const response = toErrorResponse(err);
    const unavailable = isServiceUnavailable(err);
    if (response.statusCode === 500 || unavailable) {
      logger.error(unavailable ? 'AWS service unavailable (answered 503)' : 'unhandled error', {
        err,
        routeKey: request.event.routeKey,
        requestId: request.context.awsRequestId,
      });
    } else if (response.statusCode >= 500) {
      logger.warn('request failed', { code: toErrorBody(err).code, routeKey: request.event.routeKey });
    }
    request.response = response;
  },
});

/**
 * Body parsing for the routes that take a JSON body (lib/resources `ROUTES`; `optionalJson`: when one is sent): JSON only (415), at most `maxBytes`
 * (413), well-formed (400). Runs before the handler so a rejected body never reaches domain code.
 */
export const jsonBody = (maxBytes: number): HttpMiddleware => ({
  before: async (request) => {
    const event = request.event;
    const mode = routeOf(event.routeKey)?.body;
    if (mode !== 'json' && mode !== 'optionalJson') return;
    // An empty body of an optional one is no body: nothing to parse, whatever the Content-Type says.
    if (mode === 'optionalJson' && bodyBytes(event).length === 0) return;
    const contentType = (event.headers['content-type'] ?? '').toLowerCase();
    if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/.test(contentType))
      throw new UnsupportedMediaTypeError();
    const raw = bodyBytes(event);
    if (raw.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
    if (raw.length === 0) throw new InvalidJsonError('request body is empty; send a JSON object');
    let text: string;
    try {
      text = UTF8.decode(raw);
    } catch {
      throw new InvalidJsonError('request body is not valid UTF-8');
    }
    try {
      event.parsedBody = JSON.parse(text);
    } catch (err) {
      // JSON.parse throws SyntaxError (or RangeError on absurd nesting); its message names the position.
      const reason = err instanceof Error ? err.message : 'unparsable';
      throw new InvalidJsonError(`request body is not valid JSON: ${reason.slice(0, 200)}`);
    }
  },
});

/**
 * The exact bytes of a `raw` route's body (lib/resources `ROUTES`), at most `maxBytes` (413): signatures are
 * computed over them, so they reach the handler undecoded and unparsed.
 */
export const rawBody = (maxBytes: number): HttpMiddleware => ({
  before: async (request) => {
    const event = request.event;
    if (routeOf(event.routeKey)?.body !== 'raw') return;
    const raw = bodyBytes(event);
    if (raw.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
    event.rawBody = raw;
  },
});

/**
 * `Authorization: Bearer` before anything else looks at the request, so an unauthenticated caller learns nothing
 * about routes or bodies (401 first) and never makes the function parse a 1 MB body. Sets `event.principal`.
 */
export const bearerAuth = <P>(
  authenticate: (header: string | undefined) => P,
  isPublic: (event: HttpEvent) => boolean,
): MiddlewareObj<HttpEvent & { principal?: P }, APIGatewayProxyResultV2, Error, Context> => ({
  before: async (request) => {
    if (isPublic(request.event)) return;
    request.event.principal = authenticate(request.event.headers.authorization);
  },
});

/**
 * Re-reads the config when it is older than its max age, before anything in the invocation reads it, so a
 * revoked key or a changed app takes effect without a cold start (lib/config/source.ts). Never throws.
 */
export const refreshConfig = <E, R>(
  source: { refresh(): Promise<unknown> } | undefined,
): MiddlewareObj<E, R, Error, Context> => ({
  before: async () => {
    await source?.refresh();
  },
});

/**
 * Wraps a handler (with its middy chain) so that every log line of the invocation carries the Lambda request id,
 * whether it is the container's first invocation (`coldStart`), and what `keysOf` takes from the event. A wrapper,
 * not a middy middleware: the keys must hold across the whole invocation, middlewares' log lines included, and
 * AsyncLocalStorage can only scope a call it runs (lib/observability/log-context.ts). One wrapper per container.
 */
export const withLogContext = <E, R>(
  handler: (event: E, context: Context) => Promise<R>,
  keysOf: (event: E) => Record<string, unknown> = () => ({}),
): ((event: E, context: Context) => Promise<R>) => {
  let coldStart = true;
  return (event, context) => {
    const keys = { requestId: context.awsRequestId, coldStart, ...keysOf(event) };
    coldStart = false;
    return runWithLogContext(keys, () => handler(event, context));
  };
};

/**
 * How long before its Lambda timeout an invocation stops waiting for AWS and WeCom: the time it keeps to answer
 * by itself (error mapping, logs, metrics take milliseconds; the margin covers a busy event loop).
 */
export const DEADLINE_RESERVE_MS = 1_000;

/**
 * Wraps a handler so that every AWS SDK and WeCom call of the invocation ends `reserveMs` before the Lambda
 * timeout (lib/util/deadline.ts), retries included: during an outage the handler answers its own 503 with
 * Retry-After, instead of running into the timeout and leaving API Gateway to answer a bare 500 (middy's early
 * timeout, which fires 5 ms before Lambda's, would be an unmapped error as well). A wrapper for the same reason as
 * {@link withLogContext}: the deadline must cover the whole middy chain.
 */
export const withDeadline =
  <E, R>(
    handler: (event: E, context: Context) => Promise<R>,
    reserveMs = DEADLINE_RESERVE_MS,
  ): ((event: E, context: Context) => Promise<R>) =>
  async (event, context) => {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error(`the invocation is within ${reserveMs} ms of its timeout`)),
      Math.max(0, context.getRemainingTimeInMillis() - reserveMs),
    );
    try {
      return await runWithDeadline(controller.signal, () => handler(event, context));
    } finally {
      clearTimeout(timer);
    }
  };

/** Writes the invocation's metrics as one EMF line, whatever the outcome. */
export const flushMetrics = <E, R>(metrics: Metrics): MiddlewareObj<E, R, Error, Context> => ({
  after: async () => metrics.flush(),
  onError: async () => metrics.flush(),
});
