/**
 * Bundles one gateway function into a directory, as `cdk synth` needs it (./bundling.ts `functionCode` runs this in a
 * child process): `tsx infra/constructs/bundle-function.ts <function id> <output dir>`.
 */
import { build } from 'esbuild';
import { FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { esbuildOptionsFor } from './esbuild-options.js';

const [id, outDir] = process.argv.slice(2);
if (!id || !outDir || !Object.hasOwn(FUNCTIONS, id)) {
  console.error(`usage: bundle-function.ts <${Object.keys(FUNCTIONS).join('|')}> <output dir>`);
  process.exit(2);
}
await build(esbuildOptionsFor(id as FunctionId, outDir));
