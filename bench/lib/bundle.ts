/**
 * Bundling for the bench: each function exactly as the CDK stack bundles it (`esbuildOptionsFor`, from infra/),
 * and the bench's own child-process scripts (import timer, ingest and sender shims) with plain esbuild so that
 * they run on bare `node`, without tsx, like the Lambda runtime runs the function bundles.
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { FUNCTIONS } from '#lib/resources/index.js';
import { esbuildOptionsFor, REPO_ROOT } from '../../infra/constructs/esbuild-options.js';

export type FunctionId = keyof typeof FUNCTIONS;

export interface BundleReport {
  readonly id: string;
  /**
   * Bytes a cold start reads and compiles: the entry module and the chunks it imports statically, transitively
   * (what routes load with `import()` on first use is not among them).
   */
  readonly bytes: number;
  /** Every module of the artifact, lazy chunks included. */
  readonly totalBytes: number;
  /** Biggest inputs by bytes in what a cold start loads. */
  readonly inputs: readonly { readonly path: string; readonly bytes: number }[];
  /** The written entry module (`index.mjs`), when an output directory was given. */
  readonly file?: string;
}

const TOP_INPUTS = 8;

/**
 * Bundles one function as CDK does (`esbuildOptionsFor`: an entry module plus chunks); with `outDir`, writes them to
 * `<outDir>/<id>/` (`index.mjs`, `chunks/`, source maps).
 */
export async function bundleFunction(id: FunctionId, outDir?: string): Promise<BundleReport> {
  const dir = join(outDir ?? join(tmpdir(), 'wgw-bench-bundle'), id);
  if (outDir) await mkdir(dir, { recursive: true });
  const result = await build({
    ...esbuildOptionsFor(id, dir),
    write: outDir !== undefined,
    metafile: true,
    logLevel: 'silent',
  });
  const outputs: Metafile['outputs'] = result.metafile.outputs;
  const modules = Object.keys(outputs).filter((f) => f.endsWith('.mjs'));
  const entry = modules.find((f) => f.endsWith('/index.mjs') || f === 'index.mjs');
  if (!entry) throw new Error(`esbuild produced no index.mjs for ${id}`);
  const loaded = staticClosure(outputs, entry);
  const sizes = new Map<string, number>();
  for (const f of loaded) {
    for (const [path, info] of Object.entries(outputs[f]?.inputs ?? {}))
      sizes.set(path, (sizes.get(path) ?? 0) + info.bytesInOutput);
  }
  const inputs = [...sizes]
    .map(([path, bytes]) => ({ path, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, TOP_INPUTS);
  const bytesOf = (files: Iterable<string>) => [...files].reduce((n, f) => n + (outputs[f]?.bytes ?? 0), 0);
  return {
    id,
    bytes: bytesOf(loaded),
    totalBytes: bytesOf(modules),
    inputs,
    ...(outDir ? { file: join(dir, 'index.mjs') } : {}),
  };
}

/** The output files a module imports statically, itself included: what loading it loads. */
function staticClosure(outputs: Metafile['outputs'], entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of outputs[file]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(entry);
  return seen;
}

export const functionIds = (): FunctionId[] => Object.keys(FUNCTIONS) as FunctionId[];

/** Bundles one of `bench/children/*.ts` to `<outDir>/<name>.mjs` for bare `node`. */
export async function bundleChild(name: string, outDir: string): Promise<string> {
  const outfile = join(outDir, `${name}.mjs`);
  await build({
    entryPoints: [join(REPO_ROOT, 'bench', 'children', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // Like the function bundles: ESM builds of dual packages, and a `require` for CommonJS dependencies.
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    outfile,
    absWorkingDir: REPO_ROOT,
    logLevel: 'silent',
  });
  return outfile;
}
