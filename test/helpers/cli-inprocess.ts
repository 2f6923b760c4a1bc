import { Readable } from 'node:stream';
import type { CliContext } from '#cli/command.js';
import { runCli } from '#cli/main.js';

/** The CLI in-process with captured streams (no child process, no sockets): for unit tests of commands. */
export async function runInProcess(
  argv: string[],
  opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CliContext = {
    stdin: Readable.from([opts.stdin ?? '']),
    stdout: { write: (s: string) => out.push(s) > 0 },
    stderr: { write: (s: string) => err.push(s) > 0 },
    env: opts.env ?? {},
    cwd: opts.cwd ?? '/nonexistent',
    exitCode: 0,
  };
  const code = await runCli(argv, ctx);
  return { code, stdout: out.join(''), stderr: err.join('') };
}
