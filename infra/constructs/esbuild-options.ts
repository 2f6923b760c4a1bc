import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import { FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { CONSOLE_APP, EMBEDDED_CONSOLE, packWebApp } from '#lib/web/apps.js';
import { buildWebAppSync } from '#lib/web/build.js';
import { EMBEDDED_OPENAPI, packDocument, readOpenApi } from '#lib/web/documents.js';

// How every function is bundled, without aws-cdk-lib: the CDK construct (./bundling.ts), the child process that
// bundles one function for it (./bundle-function.ts), the bench and the tests all build from these options.

/** Repository root: every `FUNCTIONS[id].entry` is relative to it. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The Lambda runtime of every function (./bundling.ts `HOUSE_RUNTIME` is aws-cdk-lib's object of this name). */
export const HOUSE_RUNTIME_NAME = 'nodejs24.x';

/** esbuild target matching the runtime ('nodejs24.x' → 'node24'). */
const ESBUILD_TARGET = HOUSE_RUNTIME_NAME.replace(/^nodejs(\d+)\.x$/, 'node$1');

/**
 * ESM output still meets CommonJS dependencies that call `require` (e.g. for Node built-ins); esbuild's ESM
 * output has no `require`, so we recreate it (https://github.com/evanw/esbuild/issues/1921).
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Bundling options of every gateway function — defined once, used by the house construct and by the bench.
 *
 * Each function is one entry module plus chunks (esbuild code splitting): what a route loads with `import()` on first
 * use (the ingest function's rare routes, EventBridge Scheduler's client, the SDK's own lazy parts) stays in chunks
 * a cold start neither reads nor compiles. One file would hold them all; `import()` inside it even defeats
 * tree-shaking of what those routes share.
 *
 * An index module (`lib/store/index.ts`) on the cold-start path undoes that: esbuild puts a module in the chunk of
 * every entry that reaches it through any import, re-exports included, so a store only a lazy route uses would load
 * with the first static import of the stores' index. What ingest loads at cold start therefore imports the stores,
 * lanes and quota modules it needs by their own files (test/infra/bundle.test.ts names what must stay out).
 */
export const HOUSE_BUNDLING = {
  target: ESBUILD_TARGET,
  // Prefer the ESM build of dual packages so esbuild can tree-shake them (the AWS SDK v3 ships both).
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: true,
  // Line mappings are enough for stack traces (mapped when an error is logged: lib/observability stack-map.ts);
  // embedded sources would only grow the maps.
  sourcesContent: false,
  // Bundle the AWS SDK v3 instead of using the runtime's copy: the pinned version ships, tree-shaken, and
  // cold starts skip resolving the full runtime SDK
  // (https://docs.aws.amazon.com/lambda/latest/dg/nodejs-package.html#nodejs-package-sdk).
  //
  // Exception: credential sources Lambda never reaches. Lambda hands functions their credentials in environment
  // variables, which the SDK's default chain reads first (`fromEnv`, statically imported); SSO, ini profiles,
  // credential processes, web identity, login and container/instance metadata are only loaded by dynamic
  // `import()` when that fails. Left external, those imports stay lazy and, if ever reached, resolve to the
  // copy of the SDK the Lambda Node.js runtime ships. Saves ~100 KB of every bundle.
  externalModules: [
    '@aws-sdk/credential-provider-sso',
    '@aws-sdk/credential-provider-ini',
    '@aws-sdk/credential-provider-process',
    '@aws-sdk/credential-provider-web-identity',
    '@aws-sdk/credential-provider-login',
    '@aws-sdk/credential-provider-http',
    '@aws-sdk/token-providers',
    '@aws-sdk/nested-clients',
    '@smithy/credential-provider-imds',
    // undici's experimental Milo HTTP parser (two wasm builds, ~150 KB of base64): required only when
    // UNDICI_USE_MILO is set, which the gateway never does; llhttp, the default parser, stays bundled. esbuild
    // matches this against the import path as written in undici's parser-h1.js; nothing else we bundle imports a
    // `../milo/` path (test/infra/bundle.test.ts checks what was left out).
    '../milo/*',
  ] as string[],
} as const;

/**
 * Each AWS SDK client imports its whole package.json for one field, its version (for the user agent), and esbuild
 * inlines what is imported whole: ~2.3 KB of manifest per client in every cold start. This hands the client just
 * `{ version }`, the value it reads.
 */
export const SDK_MANIFEST_VERSION_ONLY: Plugin = {
  name: 'sdk-manifest-version-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]package\.json$/ }, async (args) => {
      const { version } = JSON.parse(await readFile(args.path, 'utf8')) as { version: string };
      return { contents: JSON.stringify({ version }), loader: 'json' };
    });
  },
};

/**
 * esbuild `define`s of a function's bundle: ingest serves the operator console and the OpenAPI document, so the
 * console's files (built from web/ right here, once per synth) and the document travel into the bundle as strings
 * (lib/web `packWebApp`, `packDocument`), in the chunks of the routes that serve them.
 */
export function definesFor(id: FunctionId): Record<string, string> {
  if (id !== 'ingest') return {};
  ingestDefines ??= {
    [EMBEDDED_CONSOLE]: JSON.stringify(packWebApp(buildWebAppSync(CONSOLE_APP))),
    [EMBEDDED_OPENAPI]: JSON.stringify(packDocument(readOpenApi())),
  };
  return ingestDefines;
}

let ingestDefines: Record<string, string> | undefined;

/**
 * The esbuild options of one function's artifact, written to `outdir`: `index.mjs` (the handler's module), its
 * chunks under `chunks/`, and a source map beside each.
 */
export function esbuildOptionsFor(id: FunctionId, outdir: string): BuildOptions {
  return {
    entryPoints: { index: path.resolve(REPO_ROOT, FUNCTIONS[id].entry) },
    bundle: true,
    splitting: true,
    platform: 'node',
    target: HOUSE_BUNDLING.target,
    format: 'esm',
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    mainFields: [...HOUSE_BUNDLING.mainFields],
    banner: { js: HOUSE_BUNDLING.banner },
    minify: HOUSE_BUNDLING.minify,
    sourcemap: HOUSE_BUNDLING.sourceMap,
    sourcesContent: HOUSE_BUNDLING.sourcesContent,
    external: [...HOUSE_BUNDLING.externalModules],
    define: definesFor(id),
    plugins: [SDK_MANIFEST_VERSION_ONLY],
    absWorkingDir: REPO_ROOT,
    logLevel: 'warning',
  };
}
