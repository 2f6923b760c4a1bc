import picocolors from 'picocolors';

export type Colors = ReturnType<typeof picocolors.createColors>;

/** A stream the CLI writes to; a TTY gets colours and an in-place progress line. */
export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
}

export interface OutputOptions {
  stdout: OutStream;
  stderr: OutStream;
  env: NodeJS.ProcessEnv;
  json: boolean;
  /** `--no-color`. */
  color: boolean;
}

/**
 * Colours only for a terminal that wants them: https://no-color.org (`NO_COLOR` set and non-empty disables),
 * `FORCE_COLOR` (non-empty, not `0`) forces them, `TERM=dumb` has none. Decided per stream, so
 * `wecom-gateway … | jq` keeps colour on the stderr progress line but none in the piped data.
 */
export function wantsColor(stream: OutStream, env: NodeJS.ProcessEnv, flag: boolean): boolean {
  if (!flag || (env.NO_COLOR ?? '') !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/**
 * Where a command's output goes. The result goes to stdout: human lines, or with `--json` exactly one JSON
 * document and nothing else. Notes, warnings and progress go to stderr, so they never corrupt piped output.
 */
export class Output {
  readonly json: boolean;
  /** Colours for stdout. */
  readonly c: Colors;
  /** Colours for stderr. */
  readonly ce: Colors;
  private progressShown = false;
  private lastProgress = '';

  constructor(private readonly opts: OutputOptions) {
    this.json = opts.json;
    this.c = picocolors.createColors(wantsColor(opts.stdout, opts.env, opts.color));
    this.ce = picocolors.createColors(wantsColor(opts.stderr, opts.env, opts.color));
  }

  /** A human line of the result (suppressed with `--json`, whose result is {@link data}). */
  line(text = ''): void {
    if (!this.json) this.opts.stdout.write(`${text}\n`);
  }

  /** The `--json` result: one document on stdout. */
  data(value: unknown): void {
    if (this.json) this.opts.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A line on stdout whatever the mode (a value meant for `$(…)`, such as a new message id). */
  raw(text: string): void {
    this.opts.stdout.write(`${text}\n`);
  }

  /** A note for the human at the terminal, on stderr. */
  note(text: string): void {
    this.clearProgress();
    this.opts.stderr.write(`${text}\n`);
  }

  warn(text: string): void {
    this.note(`${this.ce.yellow('warning:')} ${text}`);
  }

  error(text: string): void {
    this.note(`${this.ce.red('error:')} ${text}`);
  }

  /**
   * Progress of long work on stderr: rewritten in place on a terminal; elsewhere (CI logs) a line only when the
   * text changes, so a poll loop can report every round without flooding the log.
   */
  progress(text: string): void {
    if (this.opts.stderr.isTTY) {
      this.opts.stderr.write(`\r\x1b[2K${this.ce.dim(text)}`);
      this.progressShown = true;
    } else if (text !== this.lastProgress) {
      this.opts.stderr.write(`${text}\n`);
    }
    this.lastProgress = text;
  }

  clearProgress(): void {
    if (!this.progressShown) return;
    this.opts.stderr.write('\r\x1b[2K');
    this.progressShown = false;
  }

  get stdoutIsTTY(): boolean {
    return this.opts.stdout.isTTY === true;
  }
}
