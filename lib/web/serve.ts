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
export function serveWebApp(app: WebApp, path: string): WebResponse | undefined {
  if (path !== app.basePath && !path.startsWith(`${app.basePath}/`)) return undefined;
  const rest = path.slice(app.basePath.length + 1);
  const byPath = new Map(app.assets.map((a) => [a.path, a]));
  const asset = byPath.get(rest) ?? (rest.startsWith('assets/') ? undefined : byPath.get('index.html'));
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
  return { statusCode: 200, headers: headersFor(asset), body: Buffer.from(asset.base64, 'base64') };
}

function headersFor(asset: WebAsset): Record<string, string> {
  return {
    ...SECURITY_HEADERS,
    'content-type': asset.contentType,
    'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
}
