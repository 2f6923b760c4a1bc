import { randomBytes } from 'node:crypto';
import { chmod, link, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError, type GatewayConfig, parseConfig } from './domain.js';
import { CliError } from './errors.js';

/** A config document as written by a person: the raw JSON (no defaults filled in) and its validated form. */
export interface ConfigDoc {
  /** What is in the file, key order and all; edits go here so that nothing the schema would add is written. */
  raw: Record<string, unknown>;
  config: GatewayConfig;
}

/** Reads a config file for an edit; refuses one that is not JSON or not valid, so an edit never hides a problem. */
export async function readConfigDoc(path: string): Promise<ConfigDoc> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      'file_unreadable',
      `cannot read ${path}: ${code ?? err}${code === 'ENOENT' ? ' (create one with: wecom-gateway config init)' : ''}`,
      [],
      { cause: err },
    );
  }
  return parseDoc(text, path);
}

/** Parses and validates a document's text; the issues are the ones `config check` prints. */
export function parseDoc(text: string, label: string): ConfigDoc {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError('config_invalid', `${label} is not valid JSON: ${(err as Error).message}`, [], {
      cause: err,
    });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CliError('config_invalid', `${label} is not a JSON object`);
  }
  try {
    return { raw: raw as Record<string, unknown>, config: parseConfig(raw, label) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new CliError(
      'config_invalid',
      `${label} is not a valid gateway config (fix it first: wecom-gateway config check --file ${label})`,
      err.issues,
    );
  }
}

/** The text the CLI writes: two-space JSON with a final newline, like `npm start`'s own `.local/gateway.json`. */
export const configText = (raw: unknown): string => `${JSON.stringify(raw, null, 2)}\n`;

/**
 * Writes a file so that a reader (the running gateway re-reads its config every minute) sees the old or the new
 * document, never half of one: a temporary file in the same directory (rename is atomic only within one file
 * system), flushed, then renamed over the target. The file keeps its mode; a new one is 0600, since a config holds
 * app secrets.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  opts: { exclusive?: boolean } = {},
): Promise<void> {
  const mode = await stat(path).then(
    (s) => s.mode & 0o777,
    () => 0o600,
  );
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chmod(tmp, mode);
    // link() fails with EEXIST when the target exists, atomically: no check-then-write race with another writer.
    if (opts.exclusive) await link(tmp, path);
    else await rename(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CliError('file_exists', `${path} already exists`, [], { cause: err });
    }
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
}
