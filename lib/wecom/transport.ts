/**
 * How the WeCom client moves bytes. The sender uses an undici Pool (`./undici.ts`: keep-alive, bounded sockets,
 * explicit timeouts); the ingest function, which only recalls now and then, uses Node's built-in fetch
 * (`./fetch.ts`), so its bundle stays free of undici (SPEC §7: ingest bundle ≤ 400 KB).
 *
 * Failures reject with {@link WecomTransportError}, saying whether the request may have reached WeCom.
 */
export interface HttpTransport {
  request(req: TransportRequest): Promise<{ statusCode: number; text: string }>;
  close(): Promise<void>;
}

export interface TransportRequest {
  method: 'GET' | 'POST';
  path: string;
  /** JSON text, or the bytes of a multipart upload (with its `contentType`). */
  body?: string | Uint8Array;
  /** Default for a body: JSON. */
  contentType?: string;
}

/** Errors raised before any byte of the request could have reached WeCom. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/**
 * The request headers of a WeCom call: JSON for a body, and the calling function's name in `user-agent`
 * (`wecom-gateway/sender`), so that a proxy's log (or the local simulator's) tells which function called.
 */
export function requestHeaders(
  req: Pick<TransportRequest, 'body' | 'contentType'>,
  userAgent: string | undefined,
): Record<string, string> {
  return {
    ...(req.body !== undefined && { 'content-type': req.contentType ?? 'application/json; charset=utf-8' }),
    ...(userAgent !== undefined && { 'user-agent': userAgent }),
  };
}

/** Splits WECOM_API_BASE into origin and an optional path prefix. */
export function splitBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  const url = new URL(baseUrl);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}
