import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * The OpenAPI document (docs/openapi.json) the ingest function serves at `GET /v1/openapi.json`. Bundled as JSON it
 * would be an 80 KB object literal that V8 compiles at every cold start (~70 ms of the ingest function's init); as
 * the define below it is one short string, unpacked on the first request for it.
 */
/** The name esbuild `define` replaces with {@link packDocument} of the OpenAPI document (infra/constructs/esbuild-options.ts). */
export const EMBEDDED_OPENAPI = '__WECOM_OPENAPI__';

declare const __WECOM_OPENAPI__: string | undefined;

let embedded: string | undefined;

/** The OpenAPI document embedded in this bundle; undefined when running from source (tsx), see {@link readOpenApi}. */
export function embeddedOpenApi(): string | undefined {
  if (typeof __WECOM_OPENAPI__ !== 'string') return undefined;
  embedded ??= gunzipSync(Buffer.from(__WECOM_OPENAPI__, 'base64')).toString('utf8');
  return embedded;
}

/** The OpenAPI document from the repository, compact (the local stack, and the bundler before it packs it). */
export const readOpenApi = (): string =>
  JSON.stringify(JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')));

/** A text as one string for a bundle: gzipped, then base64. */
export const packDocument = (text: string): string =>
  gzipSync(Buffer.from(text, 'utf8'), { level: 9 }).toString('base64');
