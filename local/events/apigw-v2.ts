/**
 * API Gateway HTTP API, Lambda proxy integration, payload format version 2.0: the event API Gateway
 * sends to the function and the rules it applies to the function's result. Field by field as in
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 */
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
} from 'aws-lambda';
import { RandomPool } from '#lib/util/random-pool.js';

export interface HttpApiRequest {
  readonly method: string;
  /** Path without the query string, as received (still percent-encoded). */
  readonly rawPath: string;
  /** Query string without the leading `?`; empty string when there is none. */
  readonly rawQueryString: string;
  /** Request headers; repeated headers may be given as arrays. Names in any case. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Buffer;
  readonly sourceIp: string;
  /** `'POST /v1/messages/{id}'` style, or `'$default'`. */
  readonly routeKey: string;
  readonly pathParameters?: Readonly<Record<string, string>>;
  /** `'$default'` unless the API has named stages. */
  readonly stage?: string;
  /** Defaults to `new Date()`; pass one for deterministic events. */
  readonly now?: Date;
}

export const LOCAL_ACCOUNT_ID = '000000000000';
export const LOCAL_API_ID = 'local';

/** Request ids' random bytes: a pool, not an OS call per request. */
const requestIdRandom = new RandomPool();

/**
 * Bodies of these types reach the function as text; any other body is base64-encoded with
 * `isBase64Encoded: true`, as HTTP APIs do for binary payloads.
 */
const TEXT_CONTENT_TYPE =
  /^(text\/|application\/([\w.+-]+\+)?(json|xml|javascript)\b|application\/x-www-form-urlencoded\b)/i;

/** Builds the payload format 2.0 event for one HTTP request. */
export function buildHttpApiEvent(req: HttpApiRequest): APIGatewayProxyEventV2 {
  const now = req.now ?? new Date();
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [rawName, rawValue] of Object.entries(req.headers)) {
    if (rawValue === undefined) continue;
    const name = rawName.toLowerCase();
    const values = typeof rawValue === 'string' ? [rawValue] : [...rawValue];
    if (name === 'cookie') {
      // Format 2.0 moves cookies out of the headers into `cookies`, one entry per cookie.
      cookies = [
        ...(cookies ?? []),
        ...values.flatMap((v) => v.split(';').map((c) => c.trim())).filter((c) => c !== ''),
      ];
      continue;
    }
    // "Duplicate headers are combined with commas and included in the headers field."
    headers[name] = headers[name] === undefined ? values.join(',') : [headers[name], ...values].join(',');
  }

  const domainName = (headers.host ?? 'localhost').replace(/:\d+$/, '');
  const stage = req.stage ?? '$default';
  const hasBody = req.body.length > 0;
  const isText = TEXT_CONTENT_TYPE.test(headers['content-type'] ?? '');

  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: req.routeKey,
    rawPath: req.rawPath,
    rawQueryString: req.rawQueryString,
    headers,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: req.method.toUpperCase(),
        path: req.rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: requestId(),
      routeKey: req.routeKey,
      stage,
      time: formatRequestTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: hasBody && !isText,
  };
  // Optional fields are absent, not empty, when the request has none (as in AWS).
  if (cookies) event.cookies = cookies;
  const query = parseQueryString(req.rawQueryString);
  if (query) event.queryStringParameters = query;
  if (req.pathParameters && Object.keys(req.pathParameters).length > 0) {
    event.pathParameters = { ...req.pathParameters };
  }
  if (hasBody) event.body = req.body.toString(isText ? 'utf8' : 'base64');
  return event;
}

/** "Duplicate query strings are combined with commas and included in the queryStringParameters field." */
function parseQueryString(raw: string): Record<string, string> | undefined {
  if (raw === '') return undefined;
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    params[key] = params[key] === undefined ? value : `${params[key]},${value}`;
  }
  return Object.keys(params).length > 0 ? params : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** CLF-style time as in `requestContext.time`: `12/Mar/2020:19:03:58 +0000`. */
function formatRequestTime(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`
  );
}

/** API Gateway request ids look like `JKJaXmPLvHcESHA=`: 10 random bytes, base64. */
function requestId(): string {
  return requestIdRandom.bytes(10).toString('base64');
}

export interface HttpResponse {
  readonly statusCode: number;
  /** `set-cookie` may carry several values. */
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

/**
 * Turns a function result into the HTTP response API Gateway would send, with format 2.0's rules:
 * a result without `statusCode` (a string, or any JSON value) is sent as a 200 `application/json`
 * response whose body is that value serialized; otherwise `statusCode`, `headers`, `cookies` (one
 * `set-cookie` header each) and `body` (base64-decoded when `isBase64Encoded`) are used.
 *
 * @throws TypeError when the result has a `statusCode` that is not a valid HTTP status; API Gateway
 *   answers 500 then.
 */
export function toHttpResponse(result: APIGatewayProxyResultV2<unknown>): HttpResponse {
  if (!isStructuredResult(result)) {
    // e.g. returning "Hello" gives body `Hello`, returning { a: 1 } gives body `{"a":1}`.
    const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
  }
  const statusCode: unknown = result.statusCode;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    throw new TypeError(`invalid statusCode in function result: ${String(statusCode)}`);
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    headers[name.toLowerCase()] = String(value);
  }
  if (result.cookies && result.cookies.length > 0) headers['set-cookie'] = [...result.cookies];
  const rawBody = result.body ?? '';
  const body = result.isBase64Encoded ? Buffer.from(rawBody, 'base64') : Buffer.from(rawBody, 'utf8');
  return { statusCode, headers, body };
}

function isStructuredResult(result: unknown): result is APIGatewayProxyStructuredResultV2 {
  return typeof result === 'object' && result !== null && 'statusCode' in result;
}
