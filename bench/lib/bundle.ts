/**
 * Bundling for the bench: each function exactly as the CDK stack bundles it (`esbuildOptionsFor`, from infra/),
 * and the bench's own child-process scripts (import timer, ingest and sender shims) with plain esbuild so that
 * they run on bare `node`, without tsx, like the Lambda runtime runs the function bundles.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { FUNCTIONS } from '#lib/resources/index.js';
import { esbuildOptionsFor, REPO_ROOT } from '../../infra/constructs/bundling.js';

export type FunctionId = keyof typeof FUNCTIONS;

export interface BundleReport {
  readonly id: string;
  /** Size of the minified .mjs (what Node parses at cold start). */
  readonly bytes: number;
  /** Biggest inputs by bytes in the output. */
  readonly inputs: readonly { readonly path: string; readonly bytes: number }[];
  /** Written bundle, when an output directory was given. */
  readonly file?: string;
}

const TOP_INPUTS = 8;

/** Bundles one function as CDK does; with `outDir`, writes `<outDir>/<id>/index.mjs` (+ source map). */
export async function bundleFunction(id: FunctionId, outDir?: string): Promise<BundleReport> {
  const file = outDir ? join(outDir, id, 'index.mjs') : undefined;
  if (outDir) await mkdir(join(outDir, id), { recursive: true });
  const result = await build({
    ...esbuildOptionsFor(id),
    ...(file ? { outfile: file, write: true } : { write: false }),
    metafile: true,
    logLevel: 'silent',
  });
  const metafile: Metafile = result.metafile;
  const [outPath, output] = Object.entries(metafile.outputs).find(([f]) => f.endsWith('.mjs')) ?? [];
  if (!outPath || !output) throw new Error(`esbuild produced no .mjs output for ${id}`);
  const inputs = Object.entries(output.inputs)
    .map(([path, info]) => ({ path, bytes: info.bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, TOP_INPUTS);
  return { id, bytes: output.bytes, inputs, ...(file ? { file } : {}) };
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
