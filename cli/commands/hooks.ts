import { randomBytes } from 'node:crypto';
import { type Command, Option } from 'commander';
import { HOOK_SOURCES, SECRET_SOURCES } from '#lib/config/hooks-schema.js';
import { action, type CliContext, list, type Run } from '../command.js';
import { type Edit, type EditTarget, editConfig } from '../config-edit.js';
import { sha256Hex } from '../domain.js';
import { UsageError } from '../errors.js';

type HookSource = (typeof HOOK_SOURCES)[number];

/**
 * 24 bytes from the OS CSPRNG (192 bits: beyond guessing, and the URL stays short), base64url so the token is
 * one URL path segment without escaping. The config stores only its SHA-256, like an API key's.
 */
const TOKEN_BYTES = 24;
export const newUrlToken = (): string => randomBytes(TOKEN_BYTES).toString('base64url');

/** GitHub and GitLab let the receiver choose the signing secret; Sentry issues its own (the client secret). */
const GENERATED_SECRET: ReadonlySet<HookSource> = new Set(['github', 'gitlab']);

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface RecipientFlags {
  to?: string[];
  party?: string[];
  tag?: string[];
}

/** `--to a,b --party 2` → `{ touser: 'a|b', toparty: '2' }` (WeCom's own `|` form, as the docs show it). */
function recipients(flags: RecipientFlags): Record<string, string> {
  const to: Record<string, string> = {};
  if (flags.to?.length) to.touser = [...new Set(flags.to)].join('|');
  if (flags.party?.length) to.toparty = [...new Set(flags.party)].join('|');
  if (flags.tag?.length) to.totag = [...new Set(flags.tag)].join('|');
  if (Object.keys(to).length === 0) throw new UsageError('no recipient: pass --to, --party or --tag');
  return to;
}

/** Which flag an issue in the edited config points at, for an entry at `prefix` (`hooks.alertmanager`). */
const flagFor =
  (prefix: string) =>
  (field: string): string | undefined => {
    if (!field.startsWith(prefix)) return undefined;
    const rest = field.slice(prefix.length + 1);
    if (rest.startsWith('app')) return '--app';
    if (rest.startsWith('robot')) return '--robot';
    if (rest.startsWith('to')) return '--to/--party/--tag';
    if (rest.startsWith('msgtype')) return '--msgtype';
    return '--name';
  };

/** What a hook or push key sends through: an app (`--app`, with recipients) or a group robot (`--robot`). */
type Target = { kind: 'app'; name: string } | { kind: 'robot'; name: string };

interface TargetFlags extends RecipientFlags {
  app?: string;
  robot?: string;
}

/**
 * The target of `--app` or `--robot` (exactly one) and its fields in the config entry: an app's with its recipients
 * (`to`), a robot's without (it posts to its group chat).
 */
function targetOf(flags: TargetFlags): { target: Target; fields: Record<string, unknown> } {
  if ((flags.app === undefined) === (flags.robot === undefined)) {
    throw new UsageError('pass --app (with --to, --party or --tag) or --robot, one of them');
  }
  if (flags.robot !== undefined) {
    if (flags.to?.length || flags.party?.length || flags.tag?.length) {
      throw new UsageError('--robot: a robot posts to its group chat; drop --to, --party and --tag');
    }
    return { target: { kind: 'robot', name: flags.robot }, fields: { robot: flags.robot } };
  }
  const app = flags.app as string;
  return { target: { kind: 'app', name: app }, fields: { app, to: recipients(flags) } };
}

/** Tells the user which apps (robots) exist when the flag names none: the schema only says "not configured". */
function requireTarget(raw: Record<string, unknown>, target: Target, label: string): void {
  const configured = (raw[target.kind === 'app' ? 'apps' : 'robots'] ?? {}) as Record<string, unknown>;
  if (!Object.hasOwn(configured, target.name)) {
    throw new UsageError(
      `--${target.kind}: ${target.kind} "${target.name}" is not configured in ${label} (${target.kind}s: ${Object.keys(configured).join(', ') || 'none'})`,
    );
  }
}

interface HookOpts extends TargetFlags, EditTarget {
  source: HookSource;
  name?: string;
}

/** Where each vendor takes the URL, with the URL filled in: printed once, right under it. */
function vendorHint(source: HookSource, url: string, name: string): string[] {
  switch (source) {
    case 'alertmanager':
      return [
        'alertmanager.yml:',
        '  receivers:',
        '    - name: wecom',
        '      webhook_configs:',
        `        - url: ${url}`,
        '          send_resolved: true',
        '          max_alerts: 20',
      ];
    case 'grafana':
      return [
        'Grafana: Alerting > Contact points > New contact point > Integration "Webhook":',
        `  URL ${url}, HTTP method POST`,
      ];
    case 'github':
      return [
        'GitHub: repository (or organization) > Settings > Webhooks > Add webhook:',
        `  Payload URL ${url}`,
        '  Content type application/json, Secret: the secret above',
      ];
    case 'gitlab':
      return [
        'GitLab: project > Settings > Webhooks > Add new webhook:',
        `  URL ${url}`,
        '  Secret token: the secret above',
      ];
    case 'sentry':
      return [
        'Sentry: Settings > Developer Settings > Custom Integration > Internal integration:',
        `  Webhook URL ${url}, turn on Alert Rule Action`,
        `  then put the integration's Client Secret into "hooks.${name}.secret" (Sentry-Hook-Signature is then verified)`,
      ];
    default:
      return [
        'Try it:',
        `  curl -sS '${url}' -H 'content-type: application/json' -d '{"title":"it works","status":"ok"}'`,
      ];
  }
}

async function createHook(run: Run, opts: HookOpts): Promise<void> {
  const { out } = run;
  const name = opts.name ?? opts.source;
  if (!NAME.test(name))
    throw new UsageError(`--name: hook names are 1-64 of [A-Za-z0-9_-], got ${JSON.stringify(name)}`);
  const { target, fields } = targetOf(opts);
  const token = newUrlToken();
  const secret = GENERATED_SECRET.has(opts.source)
    ? randomBytes(TOKEN_BYTES).toString('base64url')
    : undefined;
  const entry = {
    source: opts.source,
    ...fields,
    tokenSha256: sha256Hex(token),
    ...(secret ? { secret } : {}),
  };
  const edit: Edit = {
    apply: ({ raw }, label) => {
      requireTarget(raw, target, label);
      const hooks = (raw.hooks ?? {}) as Record<string, unknown>;
      if (Object.hasOwn(hooks, name)) {
        throw new UsageError(`--name: ${label} already has a hook "${name}"; choose another --name`);
      }
      raw.hooks = { ...hooks, [name]: entry };
    },
    flagFor: flagFor(`hooks.${name}`),
  };
  const result = await editConfig(run, opts, edit);
  if (!result.stored) {
    out.line('not stored: the hook was not added, and its URL is void');
    run.ctx.exitCode = 1;
    return;
  }
  const url = `${result.apiUrl}/v1/hooks/${name}/${token}`;
  // The entry is printed without the secret: the operator has it once, above, and the config holds it.
  const { secret: _secret, ...shown } = entry;
  out.data({ name, url, ...(secret ? { secret } : {}), entry: shown, stored: result.where });
  const { c } = out;
  out.line(
    `${c.green('✓')} hook ${c.bold(name)} (${opts.source} → ${target.kind} ${target.name}) added to ${result.where}`,
  );
  out.line();
  out.line(
    'Webhook URL (the token in it is the password; it is shown only this once, the config keeps its SHA-256):',
  );
  out.line();
  out.line(`  ${c.bold(c.green(url))}`);
  if (secret) {
    out.line();
    out.line(`${SECRET_SOURCES[opts.source]}:`);
    out.line(`  ${c.bold(c.green(secret))}`);
  }
  out.line();
  for (const l of vendorHint(opts.source, url, name)) out.line(l);
  out.line();
  out.line(c.dim(afterwards(result.file !== undefined)));
  if (result.urlGuessed) out.warn(URL_GUESSED);
}

/** A file may be meant for a deployed stage: its URL is then the stack's ApiUrl, which only --url can say. */
const URL_GUESSED =
  "the URL uses npm start's default address; for a deployed stage put its ApiUrl in front of /v1/… (or pass --url, or use --stage)";

const afterwards = (file: boolean): string =>
  file
    ? 'A running gateway reads its config file again within about a minute.'
    : 'The functions pick up the new config within about a minute.';

interface PushKeyOpts extends TargetFlags, EditTarget {
  name?: string;
  msgtype?: 'markdown' | 'markdown_v2' | 'text' | 'textcard';
}

async function createPushKey(run: Run, opts: PushKeyOpts): Promise<void> {
  const { out } = run;
  const name = opts.name ?? `push-${new Date().toISOString().slice(0, 10)}`;
  if (name.length === 0) throw new UsageError('--name must not be empty');
  const { target, fields } = targetOf(opts);
  const sendkey = newUrlToken();
  const entry = {
    name,
    sha256: sha256Hex(sendkey),
    ...fields,
    ...(opts.msgtype ? { msgtype: opts.msgtype } : {}),
  };
  const edit: Edit = {
    apply: ({ raw }, label) => {
      requireTarget(raw, target, label);
      const keys = Array.isArray(raw.pushKeys) ? (raw.pushKeys as { name?: unknown }[]) : [];
      if (keys.some((k) => k.name === name)) {
        throw new UsageError(`--name: ${label} already has a push key "${name}"; choose another --name`);
      }
      raw.pushKeys = [...keys, entry];
    },
    flagFor: (field) =>
      field.startsWith('pushKeys') ? flagFor(field.split('.').slice(0, 2).join('.'))(field) : undefined,
  };
  const result = await editConfig(run, opts, edit);
  if (!result.stored) {
    out.line('not stored: the push key was not added, and its URL is void');
    run.ctx.exitCode = 1;
    return;
  }
  const url = `${result.apiUrl}/v1/push/${sendkey}`;
  out.data({ name, url, entry, stored: result.where });
  const { c } = out;
  out.line(
    `${c.green('✓')} push key ${c.bold(name)} (→ ${target.kind} ${target.name}) added to ${result.where}`,
  );
  out.line();
  out.line(
    'Push URL (the sendkey in it is the password; shown only this once, the config keeps its SHA-256):',
  );
  out.line();
  out.line(`  ${c.bold(c.green(url))}`);
  out.line();
  out.line('Try it (ServerChan-compatible: title, desp as Markdown):');
  out.line(`  curl -sS '${url}' --data-urlencode 'title=Backup done' --data-urlencode 'desp=**3** files'`);
  out.line();
  out.line(c.dim(afterwards(result.file !== undefined)));
  if (result.urlGuessed) out.warn(URL_GUESSED);
}

/** The options every config edit shares: where it goes. */
function addTargetOptions(cmd: Command): Command {
  return cmd
    .option('-f, --file <path>', 'config file to edit (default: $GATEWAY_CONFIG, else .local/gateway.json)')
    .option(
      '--stage <stage>',
      "edit the deployed stage's config secret instead, through config push (diff, confirm)",
    )
    .option('--region <region>', 'with --stage: AWS region of the stack')
    .option('--profile <profile>', 'with --stage: AWS profile')
    .option('-y, --yes', 'with --stage: push without asking (required when stdin is not a terminal)')
    .option(
      '--url <url>',
      'with a file: the gateway URL to print (default: the running npm start, else http://127.0.0.1:3000)',
    );
}

function addRecipientOptions(cmd: Command): Command {
  return cmd
    .option('-t, --to <userids>', 'member userid(s) (touser); repeat or comma-separate', list)
    .option('--party <ids>', 'party id(s) (toparty)', list)
    .option('--tag <ids>', 'tag id(s) (totag)', list);
}

export function registerHooks(program: Command, ctx: CliContext): void {
  const hooks = program
    .command('hooks')
    .description('webhooks from Alertmanager, Grafana, GitHub, GitLab, Sentry and anything that posts JSON');
  const create = hooks
    .command('create')
    .description(
      "add a hook to the config and print its URL once (the config stores only the token's SHA-256)",
    )
    .addOption(
      new Option('-s, --source <source>', 'who posts to it').choices(HOOK_SOURCES).makeOptionMandatory(),
    )
    .option('-a, --app <app>', 'the app that sends the messages (to --to, --party or --tag)')
    .option('-r, --robot <robot>', 'or a group robot that posts them to its group chat')
    .option('-n, --name <name>', 'hook name, part of the URL (default: the source)');
  addTargetOptions(addRecipientOptions(create))
    .addHelpText(
      'after',
      '\nExamples:\n  $ wecom-gateway hooks create --source alertmanager --app ops --to zhangsan,lisi\n  $ wecom-gateway hooks create --source grafana --robot oncall\n  $ wecom-gateway hooks create --source github --app ops --party 5 --stage prod',
    )
    .action(action(ctx, createHook));
}

export function registerPushKeys(program: Command, ctx: CliContext): void {
  const keys = program
    .command('push-keys')
    .description('one-URL push (ServerChan-compatible sendkeys) for scripts and cron');
  const create = keys
    .command('create')
    .description('add a push key to the config and print its URL once (the config stores only its SHA-256)')
    .option('-a, --app <app>', 'the app that sends the messages (to --to, --party or --tag)')
    .option('-r, --robot <robot>', 'or a group robot that posts them to its group chat')
    .option(
      '-n, --name <name>',
      'name of the key in the config and in message metadata (default: push-<date>)',
    )
    .addOption(
      new Option(
        '--msgtype <type>',
        'how title and desp are sent (default: markdown; textcard for apps, markdown_v2 for robots)',
      ).choices(['markdown', 'markdown_v2', 'text', 'textcard']),
    );
  addTargetOptions(addRecipientOptions(create))
    .addHelpText(
      'after',
      '\nExamples:\n  $ wecom-gateway push-keys create --app ops --to zhangsan --name backup\n  $ wecom-gateway push-keys create --robot oncall --name nightly',
    )
    .action(action(ctx, createPushKey));
}
