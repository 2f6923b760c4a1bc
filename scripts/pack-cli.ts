// `npm run pack:cli`: the operator CLI as a package of its own, `wecom-gateway-<version>.tgz`, that runs anywhere
// with `npx ./wecom-gateway-<version>.tgz …` — no checkout, no `npm ci`. The repository's package.json stays what
// `npm ci && npm start` needs (TypeScript through tsx, the emulators, CDK); the packed one is one esbuild bundle
// with every runtime dependency inlined and an empty dependency list, so installing it fetches nothing.
//
//   npm run pack:cli [-- --out dist/cli] [--pack-destination .]
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import pkg from '../package.json' with { type: 'json' };

const ROOT = resolve(import.meta.dirname, '..');
const BIN = 'wecom-gateway.mjs';
/** The Node the bundle is compiled for: the oldest the project supports (engines), not the one it pins. */
const NODE_TARGET = 'node20';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: join(ROOT, 'dist', 'cli') },
    'pack-destination': { type: 'string', default: ROOT },
  },
});
const out = resolve(values.out);
const destination = resolve(values['pack-destination']);

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

await build({
  stdin: {
    contents: "import { main } from './main.ts';\nawait main();\n",
    resolveDir: join(ROOT, 'cli'),
    sourcefile: 'wecom-gateway.ts',
    loader: 'ts',
  },
  outfile: join(out, BIN),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: NODE_TARGET,
  minify: true,
  legalComments: 'linked',
  // Some inlined CommonJS dependencies call require() for Node built-ins, which an ES module does not have.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __wgwCreateRequire } from 'node:module';\nconst require = __wgwCreateRequire(import.meta.url);",
  },
  // cli/packaging.ts: hints that say where `npm start` runs, since the packed CLI has no checkout beside it.
  define: { WECOM_GATEWAY_PACKED: 'true' },
  logLevel: 'warning',
});

const manifest = {
  name: pkg.name,
  version: pkg.version,
  description: `${pkg.description} The operator CLI, bundled: no dependencies to install.`,
  license: pkg.license,
  type: 'module',
  engines: { node: '>=20' },
  bin: { 'wecom-gateway': BIN },
  files: [BIN, `${BIN}.LEGAL.txt`, 'README.md', 'LICENSE'],
  dependencies: {},
};
await writeFile(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
await copyFile(join(ROOT, 'LICENSE'), join(out, 'LICENSE'));
await writeFile(
  join(out, 'README.md'),
  `# wecom-gateway CLI ${pkg.version}

The operator command-line tool of wecom-gateway, bundled into one file. Run it without installing anything else:

    npx ./wecom-gateway-${pkg.version}.tgz --help
    npx -p ./wecom-gateway-${pkg.version}.tgz wecom-gateway status <id> --url https://… --key wgw_…

Every command is in docs/reference/cli.md of the repository. \`npm start\` (the local stack) runs from a checkout.
`,
);

await mkdir(destination, { recursive: true });
const packed = execFileSync('npm', ['pack', '--pack-destination', destination, '--json'], {
  cwd: out,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [tarball] = JSON.parse(packed) as { filename: string; size: number }[];
if (!tarball) throw new Error(`npm pack printed no tarball: ${packed}`);
const { filename, size } = tarball;
process.stdout.write(`${join(destination, filename)} (${(size / 1024).toFixed(0)} KB)\n`);
