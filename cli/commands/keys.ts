import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { action, type CliContext, list, type Run, readHidden, readStdin } from '../command.js';
import { ConfigError, generateWebhookSecret, parseConfig, sha256Hex } from '../domain.js';
import { UsageError } from '../errors.js';

/**
 * 32 bytes from the OS CSPRNG (256 bits, beyond brute force), base64url so the key is one shell-safe word;
 * `wgw_` makes it recognisable to secret scanners and people.
 */
const KEY_BYTES = 32;
export const newApiKey = (): string => `wgw_${randomBytes(KEY_BYTES).toString('base64url')}`;

/** What the gateway accepts after `Bearer ` (lib/ingest/auth.ts): 8–512 visible characters, no spaces. */
const ACCEPTED_KEY = /^\S{8,512}$/;

export interface KeyEntry {
  name: string;
  sha256: string;
  apps: string[];
  scopes?: string[];
}

/**
 * Checks the entry with the gateway's own config schema (app names, scope names), by validating a config that
 * holds just this key and placeholder apps. A problem comes back as the flag that caused it.
 */
function validateEntry(entry: KeyEntry): void {
  const apps = Object.fromEntries(entry.apps.map((a) => [a, { corpId: 'x', agentId: 1, secret: 'x' }]));
  try {
    parseConfig({ apps, apiKeys: [entry] });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const issue = err.issues[0];
    const flag = issue?.field.startsWith('apps')
      ? '--app'
      : issue?.field.includes('scopes')
        ? '--scopes'
        : '--name';
    throw new UsageError(`${flag}: ${issue?.message ?? err.message}`);
  }
}

interface CreateKeyOpts {
  app: string[];
  name?: string;
  scopes?: string[];
  /** Add the entry to this config file (or, with `stage`, the stage's secret) instead of printing it to paste. */
  file?: string;
  stage?: string;
  region?: string;
  profile?: string;
  yes?: boolean;
}

async function createKey(run: Run, opts: CreateKeyOpts): Promise<void> {
  const { out } = run;
  const apps = [...new Set(opts.app)];
  if (apps.length === 0) throw new UsageError('--app: name at least one app');
  const key = newApiKey();
  const entry: KeyEntry = {
    name: opts.name ?? `${apps.join('+')}-${new Date().toISOString().slice(0, 10)}`,
    sha256: sha256Hex(key),
    apps,
    ...(opts.scopes ? { scopes: [...new Set(opts.scopes)] } : {}),
  };
  validateEntry(entry);
  const editing = opts.file !== undefined || opts.stage !== undefined;
  if (!editing && (opts.region || opts.profile || opts.yes)) {
    throw new UsageError('--region, --profile and --yes need --stage');
  }
  let where: string | undefined;
  if (editing) {
    // Loaded only for an edit: printing a key stays free of the file and AWS code.
    const { editConfig } = await import('../config-edit.js');
    const result = await editConfig(run, opts, {
      apply: ({ raw }, label) => {
        const known = Object.keys((raw.apps ?? {}) as Record<string, unknown>);
        const missing = apps.filter((a) => !known.includes(a));
        if (missing.length > 0) {
          throw new UsageError(
            `--app: ${missing.join(', ')} not configured in ${label} (apps: ${known.join(', ') || 'none'})`,
          );
        }
        const keys = Array.isArray(raw.apiKeys) ? (raw.apiKeys as { name?: unknown }[]) : [];
        if (keys.some((k) => k.name === entry.name)) {
          throw new UsageError(
            `--name: ${label} already has an API key "${entry.name}"; choose another --name`,
          );
        }
        raw.apiKeys = [...keys, entry];
      },
      flagFor: () => undefined,
    });
    if (!result.stored) {
      out.line('not stored: the key was not added, and is void');
      run.ctx.exitCode = 1;
      return;
    }
    where = result.where;
  }
  out.data({ key, entry, ...(where ? { stored: where } : {}) });
  const { c } = out;
  out.line(`New API key ${c.bold(entry.name)} for ${apps.map((a) => c.cyan(a)).join(', ')}:`);
  out.line();
  out.line(`  ${c.bold(c.green(key))}`);
  out.line();
  out.line(c.yellow('It is shown only this once: store it in your secret manager now.'));
  if (where) {
    out.line(`Its entry (only the key's SHA-256) was added to "apiKeys" in ${where}.`);
    return;
  }
  out.line(`Add this entry to "apiKeys" in the gateway config (it holds only the key's SHA-256):`);
  out.line();
  out.line(`  ${JSON.stringify(entry)}`);
  out.line();
  out.line(c.dim('or let the CLI add it: wecom-gateway keys create … --file <config> (or --stage <stage>)'));
  out.line(
    c.dim('then: wecom-gateway config check --file <config> && wecom-gateway config push --stage <stage>'),
  );
}

async function hashKey({ out, ctx }: Run, arg: string | undefined): Promise<void> {
  let key: string;
  if (arg !== undefined && arg !== '-') key = arg;
  else if (ctx.stdin.isTTY && arg === undefined) key = await readHidden(ctx, 'API key (not shown): ');
  else key = (await readStdin(ctx.stdin)).replace(/\r?\n$/, '');
  if (!ACCEPTED_KEY.test(key)) {
    throw new UsageError(
      'the gateway accepts keys of 8-512 visible characters without spaces; this is not one (check for a stray newline or quote)',
    );
  }
  const sha256 = sha256Hex(key);
  out.data({ sha256 });
  out.line(sha256);
}

function webhookSecret({ out }: Run): void {
  const secret = generateWebhookSecret();
  out.data({ secret });
  const { c } = out;
  out.line(`  ${c.bold(c.green(secret))}`);
  out.line();
  out.line(
    'Put it first in the app\'s "webhook": { "secrets": [...] } (keep the old one second while receivers',
  );
  out.line('switch over), and give it to the receiver, which verifies the webhook-signature header with it.');
}

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program
    .command('keys')
    .description('make API keys and their config entries')
    .addHelpText('after', '\nThe gateway stores only the SHA-256 of each key (config "apiKeys[].sha256").');

  keys
    .command('create')
    .description('print a new random API key (once) and the "apiKeys" entry to add to the config')
    .requiredOption('-a, --app <names>', 'app(s) the key may use; repeat or comma-separate', list)
    .option('-n, --name <name>', 'name of the key in the config and in logs (default: <apps>-<date>)')
    .option(
      '-s, --scopes <scopes>',
      'messages:write, messages:read, messages:recall (recall and cancel), quiet-hours:bypass, admin (the DLQ routes); repeat or comma-separate (default: the first three)',
      list,
    )
    .option('-f, --file <path>', 'add the entry to this config file (atomically) instead of printing it')
    .option(
      '--stage <stage>',
      "add it to the deployed stage's config secret, through config push (diff, confirm)",
    )
    .option('--region <region>', 'with --stage: AWS region of the stack')
    .option('--profile <profile>', 'with --stage: AWS profile')
    .option('-y, --yes', 'with --stage: push without asking (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wecom-gateway keys create --app ops --name ci --scopes messages:write\n  $ wecom-gateway keys create --app ops --name ci --file config.prod.json',
    )
    .action(action(ctx, createKey));

  keys
    .command('hash')
    .description("print the SHA-256 of an existing key, as the config's apiKeys[].sha256 wants it")
    .argument('[key]', 'the key; omit it (or pass -) to read it from stdin, so it stays out of shell history')
    .addHelpText(
      'after',
      '\nExamples:\n  $ printf %s "$KEY" | wecom-gateway keys hash\n  $ wecom-gateway keys hash      # prompts without echo on a terminal',
    )
    .action(action(ctx, hashKey));

  keys
    .command('webhook-secret')
    .description('print a new Standard Webhooks signing secret (whsec_…) for an app\'s "webhook.secrets"')
    .action(action(ctx, webhookSecret));
}
