import type { Command } from 'commander';
import { UsageError } from './errors.js';
import { Output, type OutStream } from './output.js';

/** What a command may touch of the outside world; main.ts passes the process's, tests could pass their own. */
export interface CliContext {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: OutStream;
  stderr: OutStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Set by a command whose outcome is a failure it has already reported (e.g. an invalid config file). */
  exitCode: number;
}

export interface GlobalFlags {
  json?: boolean;
  /** `--no-color` makes this false. */
  color?: boolean;
  debug?: boolean;
}

/** Handed to every command: its output and the context. */
export interface Run {
  out: Output;
  ctx: CliContext;
  cmd: Command;
}

export const outputFor = (ctx: CliContext, flags: GlobalFlags): Output =>
  new Output({
    stdout: ctx.stdout,
    stderr: ctx.stderr,
    env: ctx.env,
    json: flags.json === true,
    color: flags.color !== false,
  });

/**
 * Wraps a command's implementation as a commander action: builds its {@link Output} from the global flags and turns
 * a {@link UsageError} into commander's own usage failure (message, "see --help" hint, exit code 2), so a
 * mistake found after parsing looks exactly like one commander found itself.
 *
 * @example program.command('hash').argument('[key]').action(action(ctx, (run, key: string | undefined) => …))
 */
export function action<A extends unknown[]>(
  ctx: CliContext,
  fn: (run: Run, ...args: A) => Promise<void> | void,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const out = outputFor(ctx, cmd.optsWithGlobals<GlobalFlags>());
    try {
      await fn({ out, ctx, cmd }, ...(args.slice(0, -1) as A));
    } catch (err) {
      out.clearProgress();
      if (err instanceof UsageError) cmd.error(`error: ${err.message}`, { exitCode: 2, code: 'cli.usage' });
      throw err;
    }
  };
}

/** `--scopes a,b --scopes c` → ['a','b','c']: commander option parser that accumulates comma lists. */
export const list = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** Reads all of stdin as UTF-8 (for `--file -` and keys piped in). */
export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads one line from a terminal without echoing it (a key typed at a prompt stays off the screen). */
export function readHidden(ctx: CliContext, prompt: string): Promise<string> {
  const { stdin, stderr } = ctx;
  stderr.write(prompt);
  stdin.setRawMode?.(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        // Ctrl-C and Ctrl-D: raw mode delivers them as characters instead of signals.
        if (ch === '\u0003' || ch === '\u0004') {
          finish();
          reject(new UsageError('cancelled'));
          return;
        }
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Asks a yes/no question on the terminal; anything but y/yes is no. */
export async function confirm(ctx: CliContext, question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr as NodeJS.WritableStream });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}
