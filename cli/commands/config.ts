import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { DEV_CONFIG_FILE } from '#local/local-dir.js';
import { action, type CliContext, confirm, type Run, readStdin } from '../command.js';
import { describeDiff } from '../config-diff.js';
import { configText, writeFileAtomic } from '../config-file.js';
import { INIT_STAGES, type InitStage, initialConfig, placeholdersIn } from '../config-init.js';
import type { PushPlan } from '../config-push.js';
import { ConfigError, type GatewayConfig, parseConfigJson, renderedProblems } from '../domain.js';
import { CliError, UsageError } from '../errors.js';
import { PACKED } from '../packaging.js';
import { STAGE } from '../stack.js';

interface LoadedConfig {
  file: string;
  text: string;
  /** Undefined when invalid; then `issues` says why. */
  config?: GatewayConfig;
  issues: { field: string; message: string }[];
}

/** `--file`, else GATEWAY_CONFIG, else `npm start`'s `.local/gateway.json`; `-` is stdin. */
async function loadConfigFile(ctx: CliContext, file: string | undefined): Promise<LoadedConfig> {
  const path = file ?? ctx.env.GATEWAY_CONFIG ?? join('.local', DEV_CONFIG_FILE);
  let text: string;
  try {
    text = path === '-' ? await readStdin(ctx.stdin) : await readFile(resolve(ctx.cwd, path), 'utf8');
  } catch (err) {
    throw new CliError(
      'file_unreadable',
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      [],
      {
        cause: err,
      },
    );
  }
  const label = path === '-' ? 'stdin' : path;
  try {
    return { file: label, text, config: parseConfigJson(text, label), issues: [] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // A JSON syntax error has no field: report it against the document itself.
    const issues = err.issues.length > 0 ? [...err.issues] : [{ field: '(file)', message: err.message }];
    return { file: label, text, issues };
  }
}

/** Things the schema allows but an operator most likely did not mean. */
function warningsFor(config: GatewayConfig, text: string): string[] {
  const warnings: string[] = [];
  const placeholders = placeholdersIn(JSON.parse(text));
  if (placeholders.length > 0) {
    warnings.push(`still to fill in (placeholders from config init): ${placeholders.join(', ')}`);
  }
  const seen = new Map<string, number>();
  for (const k of config.apiKeys) seen.set(k.name, (seen.get(k.name) ?? 0) + 1);
  for (const [name, n] of seen) {
    if (n > 1)
      warnings.push(`API key name "${name}" is used ${n} times: names identify keys in logs and diffs`);
  }
  const hashes = new Set<string>();
  for (const k of config.apiKeys) {
    if (hashes.has(k.sha256)) warnings.push(`API key "${k.name}" has the same sha256 as an earlier key`);
    hashes.add(k.sha256);
  }
  // Every template rendered with its examples is a valid message (the schema checks that); at the largest values
  // its variables allow it may still exceed a WeCom limit, and a caller sending those would get a 400.
  for (const [app, { templates }] of Object.entries(config.apps)) {
    for (const [id, template] of Object.entries(templates ?? {})) {
      for (const problem of renderedProblems(template, 'longest')) {
        warnings.push(`template ${app}/${id} may be refused: ${problem}`);
      }
    }
  }
  if (config.allowLoopbackWebhooks) {
    warnings.push('allowLoopbackWebhooks is set: right for the local stack, but config push refuses it');
  }
  return warnings;
}

function printIssues(run: Run, loaded: LoadedConfig): void {
  const { out } = run;
  const width = Math.max(...loaded.issues.map((i) => i.field.length));
  out.line(`${out.c.red('✗')} ${loaded.file} is not a valid gateway config:`);
  for (const i of loaded.issues) out.line(`  ${out.c.bold(i.field.padEnd(width))}  ${i.message}`);
}

async function check(run: Run, opts: { file?: string }): Promise<void> {
  const { out, ctx } = run;
  const loaded = await loadConfigFile(ctx, opts.file);
  if (!loaded.config) {
    out.data({ file: loaded.file, valid: false, issues: loaded.issues });
    printIssues(run, loaded);
    ctx.exitCode = 1;
    return;
  }
  const { config } = loaded;
  const warnings = warningsFor(config, loaded.text);
  out.data({
    file: loaded.file,
    valid: true,
    apps: Object.keys(config.apps),
    // Robots by name only: a robot's key is a secret, like an app's.
    robots: Object.keys(config.robots ?? {}),
    apiKeys: config.apiKeys.map((k) => ({
      name: k.name,
      apps: k.apps,
      ...(k.robots ? { robots: k.robots } : {}),
      scopes: k.scopes,
    })),
    hooks: Object.entries(config.hooks ?? {}).map(([name, h]) => ({
      name,
      source: h.source,
      ...(h.robot !== undefined ? { robot: h.robot } : { app: h.app, to: h.to }),
      signed: h.secret !== undefined,
    })),
    pushKeys: (config.pushKeys ?? []).map((k) => ({
      name: k.name,
      ...(k.robot !== undefined ? { robot: k.robot } : { app: k.app, to: k.to }),
      msgtype: k.msgtype,
    })),
    templates: templateNames(config),
    warnings,
  });
  out.line(`${out.c.green('✓')} ${loaded.file} is a valid gateway config`);
  for (const l of describeConfig(config, out.c)) out.line(l);
  for (const w of warnings) out.warn(w);
}

type Recipients = { touser?: unknown; toparty?: unknown; totag?: unknown };

/** Where a hook or push key sends: `app ops, to users a, b` or `robot oncall`. */
const destination = (e: {
  app?: string | undefined;
  robot?: string | undefined;
  to?: Recipients | undefined;
}) => (e.robot !== undefined ? `robot ${e.robot}` : `app ${e.app}, to ${describeRecipients(e.to ?? {})}`);

/** `{ touser: 'a|b', toparty: [2] }` → `users a, b; party 2`. */
export function describeRecipients(to: Recipients): string {
  const ids = (v: unknown) => (Array.isArray(v) ? v.map(String) : String(v).split('|')).join(', ');
  const parts: string[] = [];
  if (to.touser !== undefined)
    parts.push(`${ids(to.touser) === '@all' ? 'everyone' : `users ${ids(to.touser)}`}`);
  if (to.toparty !== undefined) parts.push(`parties ${ids(to.toparty)}`);
  if (to.totag !== undefined) parts.push(`tags ${ids(to.totag)}`);
  return parts.join('; ');
}

/** What a valid config sets up, one line per app, key, hook and push key, in plain words (never a value). */
export function describeConfig(
  config: GatewayConfig,
  c: { dim(s: string): string; bold(s: string): string },
): string[] {
  const lines: string[] = [];
  const none = c.dim('(none)');
  const apps = Object.entries(config.apps);
  lines.push(`  apps      ${apps.length === 0 ? none : ''}`.trimEnd());
  for (const [name, app] of apps) {
    const extras = [
      app.callback ? 'callback set' : 'no callback',
      app.markdownFallback ? `markdown sent as ${app.markdownFallback}` : undefined,
      app.webhook?.url ? 'status webhooks on' : undefined,
    ].filter(Boolean);
    lines.push(
      `    ${c.bold(name)}  corp ${app.corpId}, agent ${app.agentId} ${c.dim(`(${extras.join(', ')})`)}`,
    );
  }
  const robots = Object.entries(config.robots ?? {});
  if (robots.length > 0) lines.push('  robots');
  for (const [name, r] of robots) {
    const mentions = r.mentions?.users?.length ? `, mentions ${r.mentions.users.join(', ')}` : '';
    lines.push(
      `    ${c.bold(name)}  ${r.quota.perMinute} a minute${c.dim(mentions ? ` (${mentions.slice(2)})` : '')}`,
    );
  }
  lines.push(`  API keys  ${config.apiKeys.length === 0 ? none : ''}`.trimEnd());
  for (const k of config.apiKeys) {
    const uses = [...k.apps, ...(k.robots ?? []).map((r) => `robot ${r}`)];
    lines.push(`    ${c.bold(k.name)}  for ${uses.join(', ')} ${c.dim(`(${k.scopes.join(', ')})`)}`);
  }
  const hooks = Object.entries(config.hooks ?? {});
  lines.push(`  hooks     ${hooks.length === 0 ? none : ''}`.trimEnd());
  for (const [name, h] of hooks) {
    const signed = h.secret !== undefined ? ', signature checked' : '';
    const rules = h.rules?.length ? `, ${h.rules.length} routing rule${h.rules.length === 1 ? '' : 's'}` : '';
    lines.push(
      `    ${c.bold(name)}  ${h.source} → ${destination(h)} ${c.dim(`(POST /v1/hooks/${name}/<token>${signed}${rules})`)}`,
    );
  }
  const templates = templateNames(config);
  if (templates.length > 0) lines.push(`  templates ${templates.join(', ')}`);
  const pushKeys = config.pushKeys ?? [];
  lines.push(`  push keys ${pushKeys.length === 0 ? none : ''}`.trimEnd());
  for (const k of pushKeys) {
    lines.push(`    ${c.bold(k.name)}  → ${destination(k)} ${c.dim(`(/v1/push/<sendkey>, ${k.msgtype})`)}`);
  }
  return lines;
}

interface InitOpts {
  stage: InitStage;
  file?: string;
  force?: boolean;
}

async function init(run: Run, opts: InitOpts): Promise<void> {
  const { out, ctx } = run;
  const label = opts.file ?? `config.${opts.stage}.json`;
  const path = resolve(ctx.cwd, label);
  const doc = initialConfig(opts.stage, new Date().toISOString().slice(0, 10));
  try {
    await writeFileAtomic(path, configText(doc), { exclusive: opts.force !== true });
  } catch (err) {
    if (err instanceof CliError && err.code === 'file_exists') {
      throw new CliError(
        'file_exists',
        `${label} already exists: pass --force to replace it, or --file for another name`,
      );
    }
    throw err;
  }
  const todo = placeholdersIn(doc);
  out.data({ file: label, stage: opts.stage, fillIn: todo });
  const { c } = out;
  out.line(`${c.green('✓')} wrote ${label}, a starting config for stage ${opts.stage}`);
  out.line();
  out.line('Next:');
  const steps =
    opts.stage === 'local'
      ? [`GATEWAY_CONFIG=${label} npm start${PACKED ? '   (in a wecom-gateway checkout)' : ''}`]
      : [`fill in ${todo.join(', ')} (WeCom admin console; see the $comment in the file)`];
  steps.push(
    `wecom-gateway keys create --app ops --name ci --file ${label}`,
    `wecom-gateway hooks create --source alertmanager --app ops --to <userid> --file ${label}   (optional)`,
    `wecom-gateway config check --file ${label}`,
  );
  if (opts.stage !== 'local') {
    steps.push(
      `wecom-gateway config push --stage ${opts.stage} --file ${label}`,
      `wecom-gateway doctor --stage ${opts.stage}`,
    );
  } else steps.push('wecom-gateway doctor');
  steps.forEach((s, i) => {
    out.line(`  ${i + 1}. ${s}`);
  });
}

/** `app/id` of every template, each rendered and validated with its examples by the schema already. */
const templateNames = (config: GatewayConfig): string[] =>
  Object.entries(config.apps).flatMap(([app, { templates }]) =>
    Object.keys(templates ?? {}).map((id) => `${app}/${id}`),
  );

interface PushOpts {
  stage: string;
  file: string;
  region?: string;
  profile?: string;
  yes?: boolean;
}

async function push(run: Run, opts: PushOpts): Promise<void> {
  const { out, ctx } = run;
  if (!STAGE.test(opts.stage)) {
    throw new UsageError(
      `--stage must match ${STAGE} (the CDK app's rule), got ${JSON.stringify(opts.stage)}`,
    );
  }
  const interactive = ctx.stdin.isTTY === true && opts.file !== '-';
  if (!opts.yes && !interactive) {
    throw new UsageError('not a terminal, so nothing can be confirmed: pass --yes to push without asking');
  }
  const loaded = await loadConfigFile(ctx, opts.file);
  if (!loaded.config) {
    out.data({ file: loaded.file, valid: false, issues: loaded.issues, pushed: false });
    printIssues(run, loaded);
    out.error('nothing was pushed');
    ctx.exitCode = 1;
    return;
  }
  if (loaded.config.allowLoopbackWebhooks) {
    throw new CliError(
      'loopback_webhooks',
      `${loaded.file} sets allowLoopbackWebhooks, which is for the local stack only (it would let webhooks reach the Lambda's own network); remove it before pushing`,
    );
  }
  // Loaded here so that `keys` and `send` never pay for the AWS SDK.
  const [{ CloudFormationClient }, { SecretsManagerClient }, { pushConfig }] = await Promise.all([
    import('@aws-sdk/client-cloudformation'),
    import('@aws-sdk/client-secrets-manager'),
    import('../config-push.js'),
  ]);
  const clientConfig = {
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.profile ? { profile: opts.profile } : {}),
  };
  const cfn = new CloudFormationClient(clientConfig);
  const secrets = new SecretsManagerClient(clientConfig);
  const showPlan = (plan: PushPlan) => {
    out.note(`${out.ce.bold(plan.stack)}: config secret ${plan.secretId}`);
    if (plan.currentProblem)
      out.warn(`the stored config cannot be compared field by field: ${plan.currentProblem}`);
    for (const l of describeDiff(plan.diff, out.ce)) out.note(`  ${l}`);
  };
  try {
    const result = await pushConfig(
      { cfn, secrets },
      {
        stage: opts.stage,
        config: loaded.config,
        text: loaded.text,
        progress: (s) => out.progress(s),
        confirm: async (plan) => {
          out.clearProgress();
          showPlan(plan);
          return opts.yes === true || (await confirm(ctx, `push ${loaded.file} to ${plan.stack}?`));
        },
      },
    );
    out.clearProgress();
    out.data(result);
    if (result.skipped === 'no_changes') out.line(`no changes: ${result.secretId} already holds this config`);
    else if (result.skipped === 'declined') {
      out.line('not pushed');
      ctx.exitCode = 1;
    } else {
      out.line(
        `${out.c.green('✓')} pushed to ${result.secretId}${result.versionId ? ` (version ${result.versionId})` : ''}`,
      );
      out.line('  the functions pick it up within about a minute');
    }
  } finally {
    cfn.destroy();
    secrets.destroy();
  }
}

export function registerConfig(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('start, validate and push the gateway config');

  config
    .command('init')
    .description(
      'write a starting config for a stage, with what to fill in (refuses to overwrite without --force)',
    )
    .addOption(
      new Option('--stage <stage>', 'local (the simulator), dev or prod')
        .choices(INIT_STAGES)
        .default('prod'),
    )
    .option('-f, --file <path>', 'where to write it (default: config.<stage>.json)')
    .option('--force', 'replace an existing file')
    .action(action(ctx, init));

  config
    .command('check')
    .description(
      "validate a config file with the gateway's own schema; names every bad field (exit 1 if invalid)",
    )
    .option(
      '-f, --file <path>',
      'config file, - for stdin (default: $GATEWAY_CONFIG, else .local/gateway.json)',
    )
    .action(action(ctx, check));

  config
    .command('push')
    .description("validate a config file, show what changes, and write it to a stage's config secret")
    .requiredOption(
      '--stage <stage>',
      'the stage deployed with `cdk deploy -c stage=<stage>` (stack wecom-gateway-<stage>)',
    )
    .requiredOption('-f, --file <path>', 'config file to push, - for stdin (needs --yes)')
    .option('--region <region>', 'AWS region of the stack (default: AWS_REGION / your AWS profile)')
    .option('--profile <profile>', 'AWS profile (default: AWS_PROFILE / default)')
    .option('-y, --yes', 'push without asking (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      '\nThe secret is found from the stack output ConfigSecretName. Only names are shown in the diff, never values.\nExample:\n  $ wecom-gateway config push --stage prod --file config.prod.json',
    )
    .action(action(ctx, push));
}
