import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * The operator CLI run the way users run it: as its own process (cli/bin.mjs, the package.json `bin`). Spawning
 * costs about half a second, so tests share a process between related checks where they can.
 */
export const REPO = join(import.meta.dirname, '..', '..');
export const BIN = join(REPO, 'cli', 'bin.mjs');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without anything that would steer colours or the target from outside the test. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [
    'FORCE_COLOR',
    'NO_COLOR',
    'WECOM_GATEWAY_URL',
    'WECOM_GATEWAY_KEY',
    'GATEWAY_CONFIG',
  ]) {
    delete env[name];
  }
  return { ...env, ...extra };
}

export function start(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; command?: string[] } = {},
): { child: ChildProcess; done: Promise<Run>; stdout: () => string } {
  const [cmd, ...pre] = opts.command ?? [process.execPath, BIN];
  const child = spawn(cmd as string, [...pre, ...args], {
    cwd: opts.cwd ?? REPO,
    env: cleanEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? -1 : 0), stdout, stderr })),
  );
  return { child, done, stdout: () => stdout };
}

/** Runs the CLI to completion; `input` is written to its stdin (which is a pipe, never a terminal). */
export function cli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; input?: string; command?: string[] } = {},
): Promise<Run> {
  const run = start(args, opts);
  run.child.stdin?.end(opts.input ?? '');
  return run.done;
}
