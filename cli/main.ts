import { CommanderError } from 'commander';
import type { CliContext } from './command.js';
import { outputFor } from './command.js';
import { ConfigError } from './domain.js';
import { ApiError, CliError } from './errors.js';
import { buildProgram } from './program.js';

/** Commander's own outcomes that are not failures. */
const COMMANDER_OK = new Set(['commander.helpDisplayed', 'commander.version']);

/**
 * Runs the CLI and returns the process exit code: 0 ok, 1 failure, 2 usage error. Known errors become one clear
 * message (and with `--json` an `{"error":…}` document on stdout); only an unexpected error with `--debug` shows
 * a stack trace.
 */
export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx, argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed the message (or the help). `commander.help` is help shown for a missing subcommand.
      return COMMANDER_OK.has(err.code) ? 0 : 2;
    }
    const flags = { json: argv.includes('--json'), color: !argv.includes('--no-color') };
    const out = outputFor(ctx, flags);
    if (err instanceof CliError || err instanceof ConfigError) {
      const details = err instanceof CliError ? err.details : err.issues;
      const status = err instanceof ApiError ? `${err.status} ${err.code}: ` : '';
      out.error(`${status}${err.message}`);
      for (const d of details) out.note(`  ${formatDetail(d)}`);
      out.data({ error: { code: err.code, message: err.message, details } });
      return err instanceof CliError ? err.exitCode : 1;
    }
    out.error(`unexpected: ${err instanceof Error ? err.message : String(err)}`);
    if (argv.includes('--debug') && err instanceof Error) out.note(err.stack ?? '');
    else out.note(out.ce.dim('(run again with --debug for the stack trace)'));
    out.data({ error: { code: 'unexpected', message: err instanceof Error ? err.message : String(err) } });
    return 1;
  }
}

function formatDetail(d: unknown): string {
  if (d && typeof d === 'object' && 'field' in d && 'message' in d)
    return `${String(d.field)}: ${String(d.message)}`;
  return typeof d === 'string' ? d : JSON.stringify(d);
}

/** The entry cli/bin.mjs calls. */
export async function main(): Promise<void> {
  const ctx: CliContext = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    exitCode: 0,
  };
  process.exitCode = await runCli(process.argv.slice(2), ctx);
}
