/**
 * The local stand-in for API Gateway (HTTP API): a node:http server that matches routes, turns each
 * request into a payload format 2.0 event, invokes the handler in-process and maps its result back
 * the way API Gateway does.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { withFunctionTimeout } from '#local/errors.js';
import { buildHttpApiEvent, buildLambdaContext, toHttpResponse } from '#local/events/index.js';

export type HttpApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyResultV2<unknown>>;

export interface ApiRoute {
  /** HTTP method, or `ANY`. */
  readonly method: string;
  /** `/v1/messages/{id}` style; a last segment `{name+}` matches the rest of the path. */
  readonly path: string;
  readonly handler: HttpApiHandler;
  /** Used in the Lambda context; defaults to `api`. */
  readonly functionName?: string;
}

export interface ApiServerOptions {
  readonly host?: string;
  readonly port?: number;
  readonly routes: readonly ApiRoute[];
  /**
   * Where a request that matches no route goes, as API Gateway's `$default` route sends it (event `routeKey`
   * `$default`, no path parameters). Without it the server answers such requests 404 itself.
   */
  readonly fallback?: Omit<ApiRoute, 'method' | 'path'>;
  /** Lambda timeout of the route handlers; a slower handler gets a 500. Default 30 s. */
  readonly functionTimeoutSeconds?: number;
  readonly functionMemoryMb?: number;
  /** Default: API Gateway's 10 MB payload limit. */
  readonly maxBodyBytes?: number;
  readonly region?: string;
  /** Called with errors thrown by handlers (API Gateway only logs them). */
  readonly onError?: (err: unknown, event: APIGatewayProxyEventV2) => void;
}

export interface ApiServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

/** https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html */
export const HTTP_API_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** How long close() lets in-flight requests finish before cutting their sockets. */
const CLOSE_GRACE_MS = 1_000;

interface CompiledRoute {
  readonly route: ApiRoute;
  readonly routeKey: string;
  readonly method: string;
  readonly segments: readonly Segment[];
  /** Higher wins: API Gateway picks the most specific matching route. */
  readonly specificity: number;
}

type Segment =
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'param'; readonly name: string }
  | { readonly kind: 'greedy'; readonly name: string };

/** Starts the server on loopback (default) and a random port (default). */
export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const routes = opts.routes.map(compileRoute);
  const fallback = opts.fallback && {
    compiled: { ...compileRoute({ ...opts.fallback, method: 'ANY', path: '/' }), routeKey: '$default' },
    pathParameters: {},
  };
  const maxBodyBytes = opts.maxBodyBytes ?? HTTP_API_MAX_PAYLOAD_BYTES;
  const timeoutSeconds = opts.functionTimeoutSeconds ?? 30;
  let closing = false;

  const server = createServer((req, res) => {
    if (closing) res.setHeader('connection', 'close');
    handleRequest(req, res).catch((err: unknown) => {
      // Only reachable on a bug in this file; never leave the client hanging.
      if (!res.headersSent) sendJson(res, 500, { message: 'Internal Server Error' });
      else res.destroy(err instanceof Error ? err : undefined);
    });
  });

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const target = req.url ?? '/';
    const queryStart = target.indexOf('?');
    const rawPath = queryStart === -1 ? target : target.slice(0, queryStart);
    const rawQueryString = queryStart === -1 ? '' : target.slice(queryStart + 1);

    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      // Answer before reading: the client may still be sending, so do not keep the connection.
      res.setHeader('connection', 'close');
      sendError(res, 413, 'payload_too_large', `request body exceeds ${maxBodyBytes} bytes`);
      return;
    }
    const body = await readBody(req, maxBodyBytes);
    if (body === undefined) {
      res.setHeader('connection', 'close');
      sendError(res, 413, 'payload_too_large', `request body exceeds ${maxBodyBytes} bytes`);
      return;
    }

    const match = matchRoute(routes, method, rawPath) ?? fallback;
    if (!match) {
      // API Gateway answers {"message":"Not Found"}; clients of this gateway expect its error shape.
      sendError(res, 404, 'not_found', `no route for ${method} ${rawPath}`);
      return;
    }

    const response = await invokeRoute(opts, timeoutSeconds, match, {
      req,
      method,
      rawPath,
      rawQueryString,
      body,
    });
    if (!response) {
      sendJson(res, 500, { message: 'Internal Server Error' });
      return;
    }
    res.statusCode = response.statusCode;
    for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
    res.setHeader('content-length', response.body.length);
    if (closing) res.setHeader('connection', 'close');
    res.end(method === 'HEAD' ? undefined : response.body);
  }

  server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive sockets would otherwise hold close() open until the client drops them.
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      await closed;
      clearTimeout(grace);
    },
  };
}

/** The matched route's function invoked as API Gateway would; undefined when it failed (API Gateway's bare 500). */
async function invokeRoute(
  opts: ApiServerOptions,
  timeoutSeconds: number,
  match: { compiled: CompiledRoute; pathParameters: Record<string, string> },
  request: { req: IncomingMessage; method: string; rawPath: string; rawQueryString: string; body: Buffer },
): Promise<ReturnType<typeof toHttpResponse> | undefined> {
  const event = buildHttpApiEvent({
    method: request.method,
    rawPath: request.rawPath,
    rawQueryString: request.rawQueryString,
    headers: withForwardedHeaders(request.req),
    body: request.body,
    sourceIp: clientIp(request.req),
    routeKey: match.compiled.routeKey,
    pathParameters: match.pathParameters,
  });
  const context = buildLambdaContext({
    functionName: match.compiled.route.functionName ?? 'api',
    memoryMb: opts.functionMemoryMb ?? 512,
    timeoutSeconds,
    ...(opts.region ? { region: opts.region } : {}),
  });

  try {
    const { route } = match.compiled;
    const result = await withFunctionTimeout(
      Promise.resolve().then(() => route.handler(event, context)),
      context.functionName,
      timeoutSeconds,
    );
    return toHttpResponse(result);
  } catch (err) {
    // A function error, a timeout or an invalid result: API Gateway answers a bare 500.
    opts.onError?.(err, event);
    return undefined;
  }
}

function compileRoute(route: ApiRoute): CompiledRoute {
  const method = route.method.toUpperCase();
  const parts = route.path.split('/').filter((p) => p !== '');
  const segments = parts.map((part, i): Segment => {
    const param = /^\{([A-Za-z0-9_.-]+)(\+)?\}$/.exec(part);
    if (!param) return { kind: 'literal', value: part };
    const name = param[1] ?? '';
    if (param[2]) {
      if (i !== parts.length - 1) throw new Error(`greedy parameter must be last: ${route.path}`);
      return { kind: 'greedy', name };
    }
    return { kind: 'param', name };
  });
  // Literal segments beat parameters, parameters beat greedy ones, an exact method beats ANY.
  const specificity =
    segments.reduce((s, seg) => s * 4 + (seg.kind === 'literal' ? 3 : seg.kind === 'param' ? 2 : 1), 0) * 2 +
    (method === 'ANY' ? 0 : 1);
  return { route, method, routeKey: `${method} ${route.path}`, segments, specificity };
}

function matchRoute(
  routes: readonly CompiledRoute[],
  method: string,
  rawPath: string,
): { compiled: CompiledRoute; pathParameters: Record<string, string> } | undefined {
  const parts = rawPath.split('/').filter((p) => p !== '');
  let best: { compiled: CompiledRoute; pathParameters: Record<string, string> } | undefined;
  for (const compiled of routes) {
    if (compiled.method !== method && compiled.method !== 'ANY') continue;
    const pathParameters = matchSegments(compiled.segments, parts);
    if (pathParameters && (!best || compiled.specificity > best.compiled.specificity)) {
      best = { compiled, pathParameters };
    }
  }
  return best;
}

function matchSegments(
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (const [i, seg] of segments.entries()) {
    if (seg.kind === 'greedy') {
      const rest = parts.slice(i);
      if (rest.length === 0) return undefined;
      params[seg.name] = decode(rest.join('/'));
      return params;
    }
    const part = parts[i];
    if (part === undefined) return undefined;
    if (seg.kind === 'literal' && part !== seg.value) return undefined;
    if (seg.kind === 'param') params[seg.name] = decode(part);
  }
  return parts.length === segments.length ? params : undefined;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Reads the body, or resolves undefined as soon as it exceeds `limit` (chunked uploads declare no
 * length). The rest is not read; the caller answers 413 with `connection: close`.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData).off('end', onEnd).off('error', reject);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** API Gateway adds these before invoking the integration. */
function withForwardedHeaders(req: IncomingMessage): Record<string, string[]> {
  const headers: Record<string, string[]> = { ...req.headersDistinct } as Record<string, string[]>;
  const ip = clientIp(req);
  const forwarded = headers['x-forwarded-for'];
  headers['x-forwarded-for'] = forwarded ? [...forwarded, ip] : [ip];
  headers['x-forwarded-proto'] = ['http'];
  headers['x-forwarded-port'] = [String(req.socket.localPort ?? '')];
  return headers;
}

function clientIp(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message, details: [] } });
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}
