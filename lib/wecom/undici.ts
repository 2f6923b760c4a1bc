import type { Dispatcher } from 'undici';
// Deep imports (see types/undici-deep.d.ts): only the Pool and request(), not all of undici.
import request from 'undici/lib/api/api-request.js';
import undiciErrors from 'undici/lib/core/errors.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';
import { WecomClient } from './client.js';
import { WecomTransportError } from './errors.js';
import { type HttpTransport, NOT_SENT_CODES, requestHeaders, splitBaseUrl } from './transport.js';

export interface UndiciTransportOptions {
  /** e.g. https://qyapi.weixin.qq.com (WECOM_API_BASE); may include a path prefix. */
  baseUrl: string;
  /** Upper bound on sockets per container: keeps pressure on WeCom predictable. */
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Sent as `user-agent` (e.g. `wecom-gateway/sender`). */
  userAgent?: string;
  /** Injected for tests (e.g. undici MockPool); default a keep-alive Pool. */
  dispatcher?: Dispatcher;
}

/** The sender's transport: one keep-alive undici Pool per container, bounded sockets, explicit timeouts. */
export function createUndiciTransport(opts: UndiciTransportOptions): HttpTransport {
  const { origin, prefix } = splitBaseUrl(opts.baseUrl);
  const pool =
    opts.dispatcher ??
    new PoolClass(origin, {
      connections: opts.connections ?? 16,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connectTimeout: opts.connectTimeoutMs ?? 3_000,
      headersTimeout: opts.headersTimeoutMs ?? 5_000,
      bodyTimeout: opts.bodyTimeoutMs ?? 5_000,
    });
  return {
    async request({ method, path, body, contentType }) {
      try {
        const res = await request.call(pool, {
          method,
          path: `${prefix}${path}`,
          headers: requestHeaders({ body, contentType }, opts.userAgent),
          ...(body !== undefined && { body }),
        });
        return { statusCode: res.statusCode, text: await res.body.text() };
      } catch (err) {
        const code = transportCode(err);
        throw new WecomTransportError(`WeCom ${path.split('?')[0]}: ${code}`, code, {
          inDoubt: !NOT_SENT_CODES.has(code),
          cause: err,
        });
      }
    },
    close: () => pool.close(),
  };
}

/**
 * A WeCom client on an undici Pool.
 *
 * @example const wecom = createUndiciWecomClient({ baseUrl: env.wecomApiBase }); await wecom.getToken(corpId, secret);
 */
export const createUndiciWecomClient = (opts: UndiciTransportOptions): WecomClient =>
  new WecomClient(createUndiciTransport(opts));

function transportCode(err: unknown): string {
  if (err instanceof undiciErrors.UndiciError) return (err as { code?: string }).code ?? err.name;
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'UNKNOWN';
}
