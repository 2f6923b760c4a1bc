import path from 'node:path';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { CONSOLE_APP, EMBEDDED_CONSOLE, packWebApp } from '#lib/web/apps.js';
import { buildWebAppSync } from '#lib/web/build.js';
import { EMBEDDED_OPENAPI, packDocument, readOpenApi } from '#lib/web/documents.js';

/** Repository root: `projectRoot`, `depsLockFilePath` and every `FUNCTIONS[id].entry` are relative to it. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The newest Node.js LTS runtime aws-cdk-lib offers (cdk-nag AwsSolutions-L1 flags older ones). */
export const HOUSE_RUNTIME = Runtime.NODEJS_24_X;

/**
 * esbuild target matching the runtime ('nodejs24.x' → 'node24'); NodejsFunction derives the same value,
 * we state it so the bundle-size bench builds exactly what CDK builds.
 */
const ESBUILD_TARGET = HOUSE_RUNTIME.name.replace(/^nodejs(\d+)\.x$/, 'node$1');

/**
 * ESM output still meets CommonJS dependencies that call `require` (e.g. for Node built-ins); esbuild's ESM
 * output has no `require`, so we recreate it (https://github.com/evanw/esbuild/issues/1921).
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Bundling options of every gateway function — defined once, used by the house construct and by
 * `bench/bundle-size.ts`.
 */
export const HOUSE_BUNDLING = {
  target: ESBUILD_TARGET,
  format: OutputFormat.ESM,
  // Prefer the ESM build of dual packages so esbuild can tree-shake them (the AWS SDK v3 ships both).
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: true,
  // Line mappings are enough for stack traces; embedded sources would only grow the artifact Node parses
  // at start-up under --enable-source-maps.
  sourcesContent: false,
  // Bundle the AWS SDK v3 instead of using the runtime's copy: the pinned version ships, tree-shaken, and
  // cold starts skip resolving the full runtime SDK
  // (https://docs.aws.amazon.com/lambda/latest/dg/nodejs-package.html#nodejs-package-sdk).
  //
  // Exception: credential sources Lambda never reaches. Lambda hands functions their credentials in environment
  // variables, which the SDK's default chain reads first (`fromEnv`, statically imported); SSO, ini profiles,
  // credential processes, web identity, login and container/instance metadata are only loaded by dynamic
  // `import()` when that fails. Left external, those imports stay lazy and, if ever reached, resolve to the
  // copy of the SDK the Lambda Node.js runtime ships. Saves ~100 KB of every bundle (SPEC §7: ingest ≤ 400 KB).
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
  // Local esbuild only: no Docker on developer machines or CI.
  forceDockerBundling: false,
} satisfies BundlingOptions;

/**
 * esbuild `define`s of a function's bundle: ingest serves the operator console and the OpenAPI document, so the
 * console's files (built from web/ right here, once per synth) and the document travel into the bundle as strings
 * (lib/web `packWebApp`, `packDocument`): a string literal costs V8 next to nothing to compile at cold start.
 */
export function definesFor(id: FunctionId): Record<string, string> {
  if (id !== 'ingest') return {};
  ingestDefines ??= {
    [EMBEDDED_CONSOLE]: JSON.stringify(packWebApp(buildWebAppSync(CONSOLE_APP))),
    [EMBEDDED_OPENAPI]: JSON.stringify(packDocument(readOpenApi())),
  };
  // CDK passes each define as one command-line argument, which Linux caps at 128 KiB (MAX_ARG_STRLEN).
  for (const [name, value] of Object.entries(ingestDefines)) {
    if (value.length > MAX_DEFINE_CHARS) {
      throw new Error(`${name} is ${value.length} characters as a define, over ${MAX_DEFINE_CHARS}`);
    }
  }
  return ingestDefines;
}

let ingestDefines: Record<string, string> | undefined;
const MAX_DEFINE_CHARS = 120 * 1024;

/** The bundling options of one function: {@link HOUSE_BUNDLING} plus its defines. */
export const bundlingFor = (id: FunctionId) => ({ ...HOUSE_BUNDLING, define: definesFor(id) });

/**
 * The esbuild options NodejsFunction derives from {@link bundlingFor} (its CLI flags:
 * `--bundle --platform=node --target --format --main-fields --banner:js --minify --sourcemap --define`).
 */
export function esbuildOptionsFor(id: FunctionId): BuildOptions {
  return {
    entryPoints: [path.resolve(REPO_ROOT, FUNCTIONS[id].entry)],
    bundle: true,
    platform: 'node',
    target: HOUSE_BUNDLING.target,
    format: HOUSE_BUNDLING.format === OutputFormat.ESM ? 'esm' : 'cjs',
    mainFields: [...HOUSE_BUNDLING.mainFields],
    banner: { js: HOUSE_BUNDLING.banner },
    minify: HOUSE_BUNDLING.minify,
    sourcemap: HOUSE_BUNDLING.sourceMap,
    sourcesContent: HOUSE_BUNDLING.sourcesContent,
    external: [...HOUSE_BUNDLING.externalModules],
    define: definesFor(id),
    outfile: 'index.mjs',
    absWorkingDir: REPO_ROOT,
  };
}
