#!/usr/bin/env node
// Entry of `npx wecom-gateway`. Plain JavaScript so that any Node can start it: the CLI itself is TypeScript
// (run through tsx, like `npm start`) and needs Node >= 22, which `npm ci` installs as the `node` devDependency.
// `npx`/`npm exec` put node_modules/.bin first on PATH, so `#!/usr/bin/env node` is usually that Node already;
// when the shell's Node is older (e.g. `npx --prefix <repo>` from elsewhere, or calling this file directly),
// re-run this file with the project's own Node instead of failing.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN_NODE_MAJOR = 22;
const self = fileURLToPath(import.meta.url);
const root = join(dirname(self), '..');

if (Number(process.versions.node.split('.')[0]) >= MIN_NODE_MAJOR) {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('./main.ts');
  await main();
} else {
  const pinned = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(pinned) || process.env.WECOM_GATEWAY_CLI_REEXEC) {
    process.stderr.write(
      `wecom-gateway: needs Node.js >= ${MIN_NODE_MAJOR} (this is ${process.version}); run \`npm ci\` in ${root} to install the project's Node\n`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, WECOM_GATEWAY_CLI_REEXEC: '1' },
  });
  // Ctrl-C reaches the child through the terminal's process group; a signal sent to this pid alone is passed on.
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1);
  });
}
