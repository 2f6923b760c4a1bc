import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { buildConnector, Dispatcher } from 'undici';
import request from 'undici/lib/api/api-request.js';
import buildConnectorFn from 'undici/lib/core/connect.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import {
  type CheckedLookupOptions,
  checkedAddresses,
  classifyAddress,
  LookupUnavailableError,
  normaliseHost,
  UnsafeUrlError,
} from '#lib/net/index.js';
import { parseRetryAfter } from './retry.js';
import type { DeliveryResult } from './types.js';

export interface WebhookClientOptions extends CheckedLookupOptions {
  /** Local stack only: plain http and loopback targets (on any port). Never in AWS. */
  allowLoopback?: boolean;
  /** Default 5 s. */
  connectTimeoutMs?: number;
  /** Time to the response headers. Default 15 s (the spec recommends giving receivers 15–30 s). */
  headersTimeoutMs?: number;
  /** Longest pause between body chunks. Default 5 s. */
  bodyTimeoutMs?: number;
  /** Whole attempt, however slowly the receiver trickles. Default 20 s. */
  totalTimeoutMs?: number;
  /** Bytes of the response read (the rest is discarded with the connection). Default 4 KiB. */
  maxResponseBytes?: number;
  /** Characters of the response body kept in the result. Default 256. */
  excerptChars?: number;
  /** Sockets per origin. Default 4. */
  connections?: number;
  /** Extra TLS options, e.g. a test CA. */
  tls?: { ca?: string | Buffer };
  /** Test seam: the socket-level connector the guard hands the checked address to. Default undici's. */
  connector?: buildConnector.connector;
}

export interface WebhookRequest {
  url: string;
  /** The signature headers and any others; content-type defaults to application/json. */
  headers: Record<string, string>;
  body: string;
  /** Ports allowed besides 443 (per app config). */
  allowedPorts?: readonly number[];
}

export interface WebhookClient {
  deliver(req: WebhookRequest): Promise<DeliveryResult>;
  close(): Promise<void>;
}

const USER_AGENT = 'wecom-gateway-webhooks/1';
const DEFAULTS = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
  maxResponseBytes: 4 * 1024,
  excerptChars: 256,
  connections: 4,
};

/**
 * The HTTP client for webhooks to business URLs — URLs our clients choose, so every connection is guarded
 * against SSRF where it matters, at connect time: the Agent's connector resolves the host once, checks every
 * address with the project's classifier (private, loopback, link-local, CGNAT, ULA, multicast, unspecified,
 * IPv4-mapped, NAT64, SIIT, 6to4, metadata addresses…) and hands exactly the first checked address to the
 * socket, with the original host name as TLS servername (SNI and certificate check). A DNS answer that changes
 * between check and connect (rebinding) therefore never reaches a socket; a reused keep-alive connection is one
 * that was checked when it opened. Before that, without DNS: https only (http only with `allowLoopback`, and then
 * only to loopback), port 443 unless allowed, no userinfo. Redirects are never followed; the response is read up
 * to a small bound; every phase has a timeout.
 *
 * @example
 * const client = createWebhookClient({ allowLoopback: config.allowLoopbackWebhooks });
 * const result = await client.deliver({ url, headers: { ...signWebhook(msg, secrets), 'content-type': 'application/json' }, body });
 */
export function createWebhookClient(opts: WebhookClientOptions = {}): WebhookClient {
  const o = { ...DEFAULTS, ...definedOnly(opts) };
  const agent = new AgentClass({
    connect: guardedConnector(opts, o.connectTimeoutMs),
    connections: o.connections,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    headersTimeout: o.headersTimeoutMs,
    bodyTimeout: o.bodyTimeoutMs,
  });

  return {
    async deliver(req) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let target: URL;
      try {
        target = checkedUrl(req, opts.allowLoopback === true);
      } catch (err) {
        if (err instanceof UnsafeUrlError)
          return { kind: 'refused', reason: err.message, latencyMs: elapsed() };
        throw err;
      }
      try {
        const res = await request.call(agent, {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...req.headers },
          body: req.body,
          signal: AbortSignal.timeout(o.totalTimeoutMs),
        });
        const latencyMs = elapsed();
        const excerpt = await readExcerpt(res.body, o.maxResponseBytes, o.excerptChars);
        const retryAfter = parseRetryAfter(headerValue(res.headers['retry-after']), Date.now());
        return {
          kind: 'response',
          status: res.statusCode,
          latencyMs,
          excerpt,
          ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
        };
      } catch (err) {
        return failure(err, elapsed());
      }
    },
    close: () => agent.close(),
  };
}

/**
 * The connect-time guard: resolve once, check all, connect to the first checked address. Errors go to undici's
 * callback, which fails the requests waiting for this connection.
 */
function guardedConnector(opts: WebhookClientOptions, connectTimeoutMs: number): buildConnector.connector {
  const connect =
    opts.connector ??
    buildConnectorFn({ timeout: connectTimeoutMs, ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}) });
  return (options, callback) => {
    const host = normaliseHost(options.hostname);
    const url = `${options.protocol}//${options.host ?? host}`;
    checkedAddresses(host, url, opts).then(
      ([address = '']) => {
        try {
          if (options.protocol !== 'https:' && classifyAddress(address) !== 'loopback') {
            throw new UnsafeUrlError('plain http is only allowed to loopback', url, address);
          }
          connect({ ...options, hostname: address, ...(isIP(host) ? {} : { servername: host }) }, callback);
        } catch (err) {
          callback(asError(err), null);
        }
      },
      (err: unknown) => callback(asError(err), null),
    );
  };
}

/** Checks that need no DNS. Throws UnsafeUrlError. */
function checkedUrl(req: WebhookRequest, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch (err) {
    throw new UnsafeUrlError('must be an absolute URL', req.url, undefined, { cause: err });
  }
  if (url.username !== '' || url.password !== '')
    throw new UnsafeUrlError('must not contain userinfo', req.url);
  const host = normaliseHost(url.hostname);
  const loopbackLiteral =
    host === 'localhost' || host.endsWith('.localhost') || classifyAddress(host) === 'loopback';
  if (url.protocol === 'http:' && allowLoopback) {
    if (!loopbackLiteral && isIP(host))
      throw new UnsafeUrlError('plain http is only allowed to loopback', req.url);
    return url; // a name is checked at connect time: http must resolve to loopback
  }
  if (url.protocol !== 'https:') throw new UnsafeUrlError('must use https', req.url);
  const port = url.port === '' ? 443 : Number(url.port);
  if (port !== 443 && !req.allowedPorts?.includes(port) && !(allowLoopback && loopbackLiteral)) {
    throw new UnsafeUrlError(`port ${port} is not allowed (443 unless the app allows others)`, req.url);
  }
  return url;
}

async function readExcerpt(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  chars: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
      if (received >= maxBytes) break; // leaving the loop destroys the stream: the rest is never read
    }
  } catch {
    // A body that breaks off still leaves the status; keep what arrived.
  }
  const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, chars);
}

function failure(err: unknown, latencyMs: number): DeliveryResult {
  // The connector's errors reach us as they were thrown: undici fails the waiting request with them.
  if (err instanceof UnsafeUrlError) {
    return {
      kind: 'refused',
      reason: err.message,
      ...(err.address ? { address: err.address } : {}),
      latencyMs,
    };
  }
  if (err instanceof LookupUnavailableError) {
    return { kind: 'failed', code: err.code, message: err.message, latencyMs };
  }
  const code = (err as { code?: unknown } | null)?.code;
  const name = err instanceof Error ? err.name : 'UNKNOWN';
  return {
    kind: 'failed',
    // AbortSignal.timeout (totalTimeoutMs) rejects with a DOMException named TimeoutError, numeric code.
    code: typeof code === 'string' ? code : name === 'TimeoutError' ? 'TIMEOUT' : name,
    message: err instanceof Error ? err.message : String(err),
    latencyMs,
  };
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));
const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
