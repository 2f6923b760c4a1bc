import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { FunctionId } from '#lib/resources/index.js';
import { EMBEDDED_CONSOLE, EMBEDDED_OPENAPI, readOpenApi, unpackWebApp } from '#lib/web/index.js';
import { definesFor, esbuildOptionsFor, HOUSE_BUNDLING } from '../../infra/constructs/bundling.js';

/** A function's bundle as CDK builds it, in memory. */
async function bundle(id: FunctionId) {
  const result = await build({
    ...esbuildOptionsFor(id),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'))?.text ?? '';
  return { js, inputs: Object.keys(result.metafile.inputs) };
}

describe('function bundles', () => {
  // The sender (WeCom) and notify (webhooks) both carry undici.
  it.each(['sender', 'notify'] as const)(
    "%s: leaves out undici's experimental Milo parser and nothing else of undici's relative imports",
    async (id) => {
      const { js, inputs } = await bundle(id);
      expect(inputs.filter((p) => p.includes('undici/lib/milo/'))).toEqual([]);
      // The default parser (llhttp, both wasm builds) is in.
      expect(inputs).toEqual(
        expect.arrayContaining([
          expect.stringContaining('undici/lib/llhttp/llhttp_simd-wasm.js'),
          expect.stringContaining('undici/lib/llhttp/llhttp-wasm.js'),
        ]),
      );
      // Relative module paths left in the bundle (as `require("../x.js")`, minified to any name) would fail in
      // Lambda: only Milo's may remain, and undici requires those only with UNDICI_USE_MILO.
      const relative = [...js.matchAll(/[\w$]\("(\.{1,2}\/[^"]+\.(?:js|mjs|cjs|json))"\)/g)].map((m) => m[1]);
      expect([...new Set(relative)].sort()).toEqual(['../milo/no-simd.js', '../milo/simd.js']);
    },
    60_000,
  );

  it('keeps undici and the XML parser out of ingest, and undici out of the callback function', async () => {
    const ingest = await bundle('ingest');
    const callback = await bundle('callback');

    expect(ingest.inputs.filter((p) => /node_modules\/(undici|fast-xml-parser)\//.test(p))).toEqual([]);
    expect(callback.inputs.filter((p) => p.includes('node_modules/undici/'))).toEqual([]);
    // The callback function does parse XML, with the parser lib/callback configures.
    expect(callback.inputs).toEqual(
      expect.arrayContaining([expect.stringContaining('node_modules/fast-xml-parser/')]),
    );
  }, 60_000);

  it('embeds the operator console in ingest, and in no other function', async () => {
    const define = definesFor('ingest')[EMBEDDED_CONSOLE];
    const packed = JSON.parse(define ?? '""') as string;
    const app = unpackWebApp(packed);
    const script = app.assets.find((a) => /^assets\/main-\w+\.js$/.test(a.path));
    expect(app.basePath).toBe('/console');
    expect(app.assets.map((a) => a.path)).toContain('index.html');
    expect(script).toBeDefined();
    const ingest = await bundle('ingest');
    const packedScript = (JSON.parse(packed) as typeof app).assets.find((a) => a.path === script?.path);
    expect(ingest.js).toContain(packedScript?.base64.slice(0, 200));
    expect(Buffer.from(script?.base64 ?? '', 'base64').toString()).toContain('API key');
    expect(ingest.js).toContain('/console');
    expect(definesFor('sender')).toEqual({});
  }, 60_000);

  it('embeds the OpenAPI document in ingest as one packed string, not as an object literal to compile', async () => {
    const packed = JSON.parse(definesFor('ingest')[EMBEDDED_OPENAPI] ?? '""') as string;
    const text = gunzipSync(Buffer.from(packed, 'base64')).toString('utf8');
    expect(text).toBe(readOpenApi());
    expect(JSON.parse(text)).toMatchObject({ openapi: '3.1.0' });
    const ingest = await bundle('ingest');
    expect(ingest.js).toContain(packed.slice(0, 200));
    expect(ingest.inputs.filter((p) => p.endsWith('openapi.json'))).toEqual([]);
    expect(ingest.js).not.toContain('"3.1.0"');
  }, 60_000);

  it('keep the external list to credential sources Lambda never reaches and the Milo parser', () => {
    for (const m of HOUSE_BUNDLING.externalModules) {
      expect(m).toMatch(
        /^(@aws-sdk\/(credential-provider-|token-providers|nested-clients)|@smithy\/credential-provider-imds$|\.\.\/milo\/\*$)/,
      );
    }
  });
});
