// Bundles every function exactly as the CDK stack does (same esbuild options, from infra/) and reports
// minified sizes and the biggest inputs. Exits 1 when ingest exceeds the SPEC §7 target (400 KB), because
// bundle size drives cold-start time. Run: npx tsx bench/bundle-size.ts
import { build, type Metafile } from 'esbuild';
import { FUNCTIONS } from '#lib/resources/index.js';
import { esbuildOptionsFor } from '../infra/constructs/bundling.js';

const KB = 1024;
const INGEST_LIMIT_BYTES = 400 * KB;
const TOP_INPUTS = 8;

interface BundleReport {
  readonly id: string;
  readonly bytes: number;
  readonly inputs: readonly { readonly path: string; readonly bytes: number }[];
}

async function bundle(id: string, entry: string): Promise<BundleReport> {
  const result = await build({
    ...esbuildOptionsFor(entry),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const metafile: Metafile = result.metafile;
  const [outPath, output] = Object.entries(metafile.outputs).find(([file]) => file.endsWith('.mjs')) ?? [];
  if (!outPath || !output) throw new Error(`esbuild produced no .mjs output for ${id}`);
  const inputs = Object.entries(output.inputs)
    .map(([path, info]) => ({ path, bytes: info.bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, TOP_INPUTS);
  return { id, bytes: output.bytes, inputs };
}

const kb = (bytes: number): string => (bytes / KB).toFixed(1);

const reports: BundleReport[] = [];
for (const definition of Object.values(FUNCTIONS)) {
  reports.push(await bundle(definition.id, definition.entry));
}

console.log('function   bytes       KB');
for (const r of reports)
  console.log(`${r.id.padEnd(10)} ${String(r.bytes).padStart(9)} ${kb(r.bytes).padStart(8)}`);
for (const r of reports) {
  console.log(`\n${r.id}: biggest inputs (bytes in output)`);
  for (const input of r.inputs) console.log(`  ${String(input.bytes).padStart(9)}  ${input.path}`);
}

const ingest = reports.find((r) => r.id === FUNCTIONS.ingest.id);
if (ingest && ingest.bytes > INGEST_LIMIT_BYTES) {
  console.error(
    `\ningest bundle ${kb(ingest.bytes)} KB exceeds the ${kb(INGEST_LIMIT_BYTES)} KB target (SPEC §7)`,
  );
  process.exitCode = 1;
} else {
  console.log(`\ningest bundle within the ${kb(INGEST_LIMIT_BYTES)} KB target (SPEC §7)`);
}
