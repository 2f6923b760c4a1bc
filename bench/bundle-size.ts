// Bundles every function exactly as the CDK stack does (same esbuild options, from infra/) and reports
// minified sizes and the biggest inputs. Exits 1 when ingest exceeds the SPEC §7 target (400 KB), because
// bundle size drives cold-start time, or when the operator console's JS+CSS exceed 50 KB gzip: it is embedded
// in ingest, and a phone loads it over whatever network it has. Run: npx tsx bench/bundle-size.ts (the full suite: npx tsx bench/run.ts,
// whose `cold` metric reports the same sizes next to the measured cold init).
import { gzipSync } from 'node:zlib';
import { FUNCTIONS } from '#lib/resources/index.js';
import { CONSOLE_APP } from '#lib/web/apps.js';
import { buildWebApp } from '#lib/web/build.js';
import { type BundleReport, bundleFunction, functionIds } from './lib/bundle.js';

const KB = 1024;
const INGEST_LIMIT_BYTES = 400 * KB;
const CONSOLE_LIMIT_GZIP_BYTES = 50 * KB;

const kb = (bytes: number): string => (bytes / KB).toFixed(1);

const reports: BundleReport[] = [];
for (const id of functionIds()) reports.push(await bundleFunction(id));

// A function is an entry module and chunks: "loaded" is what a cold start reads and compiles (the entry and what it
// imports statically), "in all" adds the chunks its rare routes import on first use.
console.log('function   loaded bytes  loaded KB   in all KB');
for (const r of reports)
  console.log(
    `${r.id.padEnd(10)} ${String(r.bytes).padStart(12)} ${kb(r.bytes).padStart(10)} ${kb(r.totalBytes).padStart(11)}`,
  );
for (const r of reports) {
  console.log(`\n${r.id}: biggest inputs loaded at cold start (bytes in output)`);
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

// What a browser downloads for the console: its script and stylesheet (index.html is a few hundred bytes).
const consoleApp = await buildWebApp(CONSOLE_APP);
const files = consoleApp.assets.filter((a) => /\.(js|css)$/.test(a.path));
const raw = files.reduce((n, a) => n + Buffer.from(a.base64, 'base64').length, 0);
const gzip = files.reduce((n, a) => n + gzipSync(Buffer.from(a.base64, 'base64'), { level: 9 }).length, 0);
console.log(`\nconsole JS+CSS  ${raw} bytes minified, ${gzip} bytes gzip (${kb(gzip)} KB)`);
if (gzip > CONSOLE_LIMIT_GZIP_BYTES) {
  console.error(`console ${kb(gzip)} KB gzip exceeds the ${kb(CONSOLE_LIMIT_GZIP_BYTES)} KB target`);
  process.exitCode = 1;
} else {
  console.log(`console within the ${kb(CONSOLE_LIMIT_GZIP_BYTES)} KB gzip target`);
}
