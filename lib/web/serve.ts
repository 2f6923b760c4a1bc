import { gzipSync } from 'node:zlib';
import type { WebApp, WebAsset } from './assets.js';

/**
 * Every page and asset is sent with these. The CSP allows only the app's own files: no inline script or style, no
 * eval, no framing, no plugins; `connect-src 'self'` lets the app call the API it is served by.
 */
export const STRICT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': STRICT_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

export interface WebResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The answer for `path` (a full request path) when it lies under the app's base path, else undefined. Paths
 * that name no file get `index.html`, so the app's own routes (deep links such as `/console/messages/<id>`)
 * load the app, which then reads its route from the URL.
 */
export function serveWebApp(
  app: WebApp,
  path: string,
  request: { acceptEncoding?: string | undefined } = {},
): WebResponse | undefined {
  if (path !== app.basePath && !path.startsWith(`${app.basePath}/`)) return undefined;
  const rest = path.slice(app.basePath.length + 1);
  const byPath = new Map(app.assets.map((a) => [a.path, a]));
  const asset = byPath.get(rest) ?? (ASSET_FILE.test(rest) ? undefined : byPath.get('index.html'));
  if (!asset) {
    return {
      statusCode: 404,
      headers: {
        ...SECURITY_HEADERS,
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
      },
      body: Buffer.from('not found\n'),
    };
  }
  const body = Buffer.from(asset.base64, 'base64');
  if (body.length >= GZIP_MIN_BYTES && acceptsGzip(request.acceptEncoding)) {
    return {
      statusCode: 200,
      headers: { ...headersFor(asset), 'content-encoding': 'gzip', vary: 'accept-encoding' },
      body: gzipped(asset, body),
    };
  }
  return { statusCode: 200, headers: { ...headersFor(asset), vary: 'accept-encoding' }, body };
}

/** What a build writes under `assets/`: a missing one is a 404, not the page (a member may be named `assets`). */
const ASSET_FILE = /^assets\/[^/]+\.(?:js|css|map)$/;

/** Below this a gzip header and trailer cost about what they save. */
const GZIP_MIN_BYTES = 1024;

/** Each asset is compressed once per process: a phone downloads the console's ~18 KB gzipped instead of ~53 KB. */
const gzipCache = new WeakMap<WebAsset, Buffer>();

function gzipped(asset: WebAsset, body: Buffer): Buffer {
  let zipped = gzipCache.get(asset);
  if (!zipped) {
    zipped = gzipSync(body, { level: 9 });
    gzipCache.set(asset, zipped);
  }
  return zipped;
}

/** `gzip` listed with a weight above zero (RFC 9110 §12.5.3); `*` counts too. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding?.trim() !== 'gzip' && coding?.trim() !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

function headersFor(asset: WebAsset): Record<string, string> {
  return {
    ...SECURITY_HEADERS,
    'content-type': asset.contentType,
    // index.html names the current hashed assets: never kept, so a deploy is seen at the next load.
    'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-store',
  };
}
