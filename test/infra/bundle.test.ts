import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { App, Stack } from 'aws-cdk-lib';
import { build, build as buildToDisk } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { EMBEDDED_CONSOLE, EMBEDDED_OPENAPI, readOpenApi, unpackWebApp } from '#lib/web/index.js';
import { functionCode } from '../../infra/constructs/bundling.js';
import {
  definesFor,
  esbuildOptionsFor,
  HOUSE_BUNDLING,
  REPO_ROOT,
} from '../../infra/constructs/esbuild-options.js';

/**
 * A function's artifact as CDK builds it, in memory: the text of every module (`js`, the entry and its chunks), of
 * what a cold start loads (`hot`: the entry and the chunks it imports statically), and the inputs.
 */
async function bundle(id: FunctionId) {
  const result = await build({
    ...esbuildOptionsFor(id, join(tmpdir(), 'wgw-infra-bundle', id)),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const modules = result.outputFiles.filter((f) => f.path.endsWith('.mjs'));
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((f) => f.endsWith('/index.mjs'));
  const hotFiles = new Set<string>();
  const visit = (f: string) => {
    if (hotFiles.has(f)) return;
    hotFiles.add(f);
    for (const i of outputs[f]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  if (entry) visit(entry);
  const hot = modules.filter((m) => hotFiles.has(relative(REPO_ROOT, m.path)));
  return {
    js: modules.map((m) => m.text).join('\n'),
    hot: hot.map((m) => m.text).join('\n'),
    hotInputs: [...hotFiles].flatMap((f) => Object.keys(outputs[f]?.inputs ?? {})),
    inputs: Object.keys(result.metafile.inputs),
    entry,
  };
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
      // (The artifact's own chunks are imported by `import("./chunks/…")`, which resolves beside the module.)
      const relative = [...js.matchAll(/[\w$]\("(\.{1,2}\/[^"]+\.(?:js|mjs|cjs|json))"\)/g)]
        .map((m) => m[1])
        .filter((p) => !p?.startsWith('./chunks/'));
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

  it("leaves the ingest function's rare routes and EventBridge Scheduler's client out of what a cold start loads", async () => {
    const ingest = await bundle('ingest');
    const lazy = [
      'lib/web/apps.ts',
      'lib/web/documents.ts',
      'lib/web/serve.ts',
      'lib/hooks/run.ts',
      'lib/ops/dlq-api.ts',
      'lib/ingest/card.ts',
      'lib/ingest/reach.ts',
      'lib/ingest/status.ts',
      'lib/ingest/list.ts',
      'lib/runtime/ingest-lazy.ts',
      // Reached through the stores' and WeCom's index modules when one is imported on the cold-start path.
      'lib/store/message-list.ts',
      'lib/store/quota-store.ts',
      'lib/store/event-store.ts',
      'lib/wecom/token-cache.ts',
      'lib/queue/sqs-dead-letter-queue.ts',
      // The SSRF guard of `callback_url`, loaded by the first message that has one.
      'lib/net/checked-lookup.ts',
      'node_modules/@aws-sdk/client-scheduler/',
    ];
    for (const path of lazy) {
      expect(
        ingest.inputs.some((p) => p.includes(path)),
        `${path} is in the artifact`,
      ).toBe(true);
      expect(
        ingest.hotInputs.filter((p) => p.includes(path)),
        `${path} loads at cold start`,
      ).toEqual([]);
    }
    // What a message needs is loaded at once.
    for (const path of ['lib/ingest/service.ts', 'lib/ingest/accept.ts', 'lib/messages/validate.ts']) {
      expect(ingest.hotInputs).toContain(path);
    }
    expect(ingest.hot.length).toBeLessThan(ingest.js.length * 0.85);
  }, 60_000);

  it.each(['ingest', 'sender'] as const)(
    "%s: carries each AWS SDK client's version, not its whole package.json",
    async (id) => {
      const fn = await bundle(id);
      const manifests = fn.inputs.filter((p) => /@aws-sdk\/client-[^/]+\/package\.json$/.test(p));
      expect(manifests.length).toBeGreaterThanOrEqual(2);
      for (const manifest of manifests) {
        const { version } = JSON.parse(readFileSync(join(REPO_ROOT, manifest), 'utf8')) as {
          version: string;
        };
        expect(fn.hot, manifest).toContain(`version:"${version}"`);
      }
      // Fields of the manifests that no client reads.
      expect(fn.js).not.toContain('typesVersions');
      expect(fn.js).not.toContain('"generate:client"');
    },
    60_000,
  );

  it('writes chunks that Node resolves: a lazy route of ingest imports with every chunk it needs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wgw-infra-chunks-'));
    try {
      const result = await buildToDisk({
        ...esbuildOptionsFor('ingest', dir),
        metafile: true,
        logLevel: 'silent',
      });
      // A route's code, and the ports the routes other than sending build on first use.
      for (const input of ['lib/web/serve.ts', 'lib/runtime/ingest-lazy.ts']) {
        const [chunk] = Object.entries(result.metafile.outputs).flatMap(([file, out]) =>
          file.endsWith('.mjs') && Object.keys(out.inputs).includes(input) ? [file] : [],
        );
        expect(chunk, input).toBeDefined();
        const mod = (await import(pathToFileURL(join(REPO_ROOT, chunk ?? '')).href)) as Record<
          string,
          unknown
        >;
        expect(Object.values(mod).some((v) => typeof v === 'function')).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it.each(['ingest', 'sender', 'callback', 'notify'] as const)(
    '%s: ships a source map beside every module, for stack traces mapped when an error is logged',
    async (id) => {
      const result = await build({
        ...esbuildOptionsFor(id, join(tmpdir(), 'wgw-infra-maps', id)),
        write: false,
        logLevel: 'silent',
      });
      const files = result.outputFiles.map((f) => f.path);
      const modules = files.filter((f) => f.endsWith('.mjs'));
      expect(modules.length).toBeGreaterThan(0);
      for (const m of modules) expect(files).toContain(`${m}.map`);
    },
    60_000,
  );

  it('keep the external list to credential sources Lambda never reaches and the Milo parser', () => {
    for (const m of HOUSE_BUNDLING.externalModules) {
      expect(m).toMatch(
        /^(@aws-sdk\/(credential-provider-|token-providers|nested-clients)|@smithy\/credential-provider-imds$|\.\.\/milo\/\*$)/,
      );
    }
  });
});

describe('functionCode (what `cdk synth` uploads)', () => {
  it('gives every function a code asset of its own, built from its own entry', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'wgw-infra-assets-'));
    try {
      const app = new App({ outdir });
      const ids = ['ingest', 'sender', 'callback', 'notify'] as const;
      // One stack per function: each bound code adds a construct named `Code`.
      const keys = ids.map((id) => functionCode(id).bind(new Stack(app, id)).s3Location?.objectKey ?? '');
      expect(new Set(keys).size).toBe(ids.length);
      for (const [i, id] of ids.entries()) {
        const hash = keys[i]?.replace(/\.zip$/, '');
        const map = JSON.parse(readFileSync(join(outdir, `asset.${hash}`, 'index.mjs.map'), 'utf8')) as {
          sources: string[];
        };
        expect(
          map.sources.some((s) => s.endsWith(FUNCTIONS[id].entry.replace(/^\.\//, ''))),
          id,
        ).toBe(true);
      }
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  }, 120_000);
});
