import { deadlineSignal } from '#lib/util/index.js';
import { WecomClient } from './client.js';
import { WecomTransportError } from './errors.js';
import { type HttpTransport, NOT_SENT_CODES, requestHeaders, splitBaseUrl } from './transport.js';

/**
 * Transport on Node's built-in fetch, for functions that call WeCom rarely (ingest: recall). Adds nothing to the
 * bundle; one overall timeout per request.
 */
export interface FetchTransportOptions {
  baseUrl: string;
  timeoutMs?: number;
  /** Sent as `user-agent` (e.g. `wecom-gateway/ingest`). */
  userAgent?: string;
}

/** The request's own timeout, and the invocation's deadline when there is one (lib/util/deadline.ts). */
function signalFor(timeoutMs: number): AbortSignal {
  const deadline = deadlineSignal();
  const timeout = AbortSignal.timeout(timeoutMs);
  return deadline ? AbortSignal.any([timeout, deadline]) : timeout;
}

export function createFetchTransport(opts: FetchTransportOptions): HttpTransport {
  const { origin, prefix } = splitBaseUrl(opts.baseUrl);
  return {
    async request({ method, path, body, contentType }) {
      try {
        const res = await fetch(`${origin}${prefix}${path}`, {
          method,
          signal: signalFor(opts.timeoutMs ?? 5_000),
          headers: requestHeaders({ body, contentType }, opts.userAgent),
          ...(body !== undefined && { body }),
        });
        return { statusCode: res.status, text: await res.text() };
      } catch (err) {
        // fetch wraps socket errors: TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }).
        const cause = (err as { cause?: { code?: unknown } }).cause;
        const code =
          typeof cause?.code === 'string' ? cause.code : err instanceof Error ? err.name : 'UNKNOWN';
        throw new WecomTransportError(`WeCom ${path.split('?')[0]}: ${code}`, code, {
          inDoubt: !NOT_SENT_CODES.has(code),
          cause: err,
        });
      }
    },
    close: async () => undefined,
  };
}

export const createFetchWecomClient = (opts: FetchTransportOptions): WecomClient =>
  new WecomClient(createFetchTransport(opts));
