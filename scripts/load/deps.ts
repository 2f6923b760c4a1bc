/**
 * Artillery lives in load/package.json with its own lockfile, not in the root devDependencies: it pulls ~470
 * packages (~470 MB: cloud SDKs for its distributed modes, playwright), and a transitive
 * `@playwright/browser-chromium` postinstall downloads a browser from the internet — which fails offline and rolls
 * back the whole install (shared/TOOLCHAIN.md). So it is installed on first use, into load/node_modules, with the
 * browser download switched off; a stamp of the lockfile's hash makes later runs skip the install.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const LOAD_DIR = join(import.meta.dirname, '..', '..', 'load');
const STAMP = join(LOAD_DIR, 'node_modules', '.wecom-gateway-lock-sha256');
export const ARTILLERY_BIN = join(LOAD_DIR, 'node_modules', 'artillery', 'bin', 'run');

/** Environment for every artillery and npm process of the load tooling: no browser download, no telemetry. */
export function loadToolEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // npm and artillery run on this Node (22, from the root devDependencies), not on whatever `node` is first on PATH:
    // artillery 2 needs Node ≥ 22.18.
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    ARTILLERY_DISABLE_TELEMETRY: 'true',
    ...extra,
  };
}

export class LoadDepsUnavailableError extends Error {
  override readonly name = 'LoadDepsUnavailableError';
  readonly code = 'LOAD_DEPS_UNAVAILABLE';
}

export interface DepsOutcome {
  /** false: the stamp matched, nothing was installed. */
  installed: boolean;
  ms: number;
  /** Size of load/node_modules on disk (only measured when installed). */
  bytes?: number;
}

/**
 * Runs `npm ci` in load/ unless load/node_modules already matches load/package-lock.json. Prints progress (an
 * install takes 1–3 minutes on 2 vCPU). Throws {@link LoadDepsUnavailableError} when npm cannot install (e.g. no
 * registry), so callers can skip with a notice.
 */
export async function ensureLoadDeps(say: (line: string) => void): Promise<DepsOutcome> {
  const lockHash = createHash('sha256')
    .update(await readFile(join(LOAD_DIR, 'package-lock.json')))
    .digest('hex');
  if (existsSync(ARTILLERY_BIN) && (await readFile(STAMP, 'utf8').catch(() => '')) === lockHash)
    return { installed: false, ms: 0 };

  say(
    'load: installing artillery into load/node_modules (first use; ~470 MB, 1–5 min, no browser download)…',
  );
  const started = Date.now();
  const ticker = setInterval(
    () => say(`load: still installing… ${Math.round((Date.now() - started) / 1000)} s`),
    15_000,
  );
  try {
    const { code, output } = await run(
      'npm',
      ['ci', '--no-audit', '--no-fund', '--loglevel=error'],
      LOAD_DIR,
      10 * 60_000,
    );
    if (code !== 0 || !existsSync(ARTILLERY_BIN)) {
      throw new LoadDepsUnavailableError(
        `npm ci in load/ failed (exit ${code}): ${output.trim().split('\n').slice(-5).join(' | ')}`,
      );
    }
  } finally {
    clearInterval(ticker);
  }
  await writeFile(STAMP, lockHash);
  const ms = Date.now() - started;
  const bytes = await diskUsage(join(LOAD_DIR, 'node_modules'));
  say(
    `load: artillery installed in ${(ms / 1000).toFixed(0)} s (${(bytes / 2 ** 20).toFixed(0)} MB on disk)`,
  );
  return { installed: true, ms, bytes };
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: loadToolEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (c: Buffer) => {
      output = (output + c.toString('utf8')).slice(-8_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, output: String(err) });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Bytes of the files under `dir` (apparent size, like `du --apparent-size`). */
async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += (await stat(join(e.parentPath, e.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
