import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '#lib/resources/index.js';
import { esbuildOptionsFor, HOUSE_BUNDLING } from '../../infra/constructs/bundling.js';

/** The sender's bundle as CDK builds it, in memory. */
async function bundleSender() {
  const result = await build({
    ...esbuildOptionsFor(FUNCTIONS.sender.entry),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'))?.text ?? '';
  return { js, inputs: Object.keys(result.metafile.inputs) };
}

describe('function bundles', () => {
  it("leave out undici's experimental Milo parser and nothing else of undici's relative imports", async () => {
    const { js, inputs } = await bundleSender();
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
  }, 60_000);

  it('keep the external list to credential sources Lambda never reaches and the Milo parser', () => {
    for (const m of HOUSE_BUNDLING.externalModules) {
      expect(m).toMatch(
        /^(@aws-sdk\/(credential-provider-|token-providers|nested-clients)|@smithy\/credential-provider-imds$|\.\.\/milo\/\*$)/,
      );
    }
  });
});
