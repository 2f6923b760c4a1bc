import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { GatewayApi } from '../api.js';
import { action, type CliContext, type Run } from '../command.js';
import { defaultConfigPath } from '../config-edit.js';
import { placeholdersIn } from '../config-init.js';
import { type Check, type DoctorInputs, doctorExitCode, runDoctor } from '../doctor.js';
import { ConfigError, type GatewayConfig, parseConfigJson } from '../domain.js';
import { UsageError } from '../errors.js';
import { STAGE } from '../stack.js';
import { resolveTarget } from '../target.js';

interface DoctorOpts {
  stage?: string;
  file?: string;
  region?: string;
  profile?: string;
  url?: string;
  key?: string;
}

type ConfigInput = DoctorInputs['config'];

function configFromText(text: string | undefined, label: string, problem?: string): ConfigInput {
  if (text === undefined) return { label, problems: [problem ?? 'no value'], placeholders: [] };
  try {
    const config: GatewayConfig = parseConfigJson(text, label);
    return { label, config, problems: [], placeholders: placeholdersIn(JSON.parse(text)) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const problems =
      err.issues.length > 0 ? err.issues.map((i) => `${i.field}: ${i.message}`) : [err.message];
    return { label, problems, placeholders: [] };
  }
}

async function localInputs(ctx: CliContext, opts: DoctorOpts): Promise<DoctorInputs> {
  if (opts.region || opts.profile) throw new UsageError('--region and --profile need --stage');
  const label = defaultConfigPath(ctx, opts.file);
  let text: string | undefined;
  let problem: string | undefined;
  try {
    text = await readFile(resolve(ctx.cwd, label), 'utf8');
  } catch (err) {
    problem = `cannot read it (${(err as NodeJS.ErrnoException).code ?? err})`;
  }
  const config = configFromText(text, label, problem);
  const target = await resolveTarget(opts, ctx.env, ctx.cwd);
  const api = new GatewayApi(target);
  return {
    where: 'local',
    config,
    apiUrl: target.url,
    appState: (app) => api.app(app),
    reach: (app, ids) => api.reach(app, ids),
  };
}

async function stageInputs(ctx: CliContext, opts: DoctorOpts & { stage: string }): Promise<DoctorInputs> {
  if (!STAGE.test(opts.stage)) {
    throw new UsageError(
      `--stage must match ${STAGE} (the CDK app's rule), got ${JSON.stringify(opts.stage)}`,
    );
  }
  if (opts.file || opts.url)
    throw new UsageError('--file and --url are for the local stack; --stage reads both from the stack');
  const [{ CloudFormationClient }, { SecretsManagerClient }, push] = await Promise.all([
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
  try {
    const outputs = await push.stackOutputs(cfn, opts.stage);
    const apiUrl = outputs.ApiUrl;
    if (!apiUrl) throw new UsageError(`stack ${push.stackName(opts.stage)} has no ApiUrl output`);
    const target = await resolveTarget(
      { url: apiUrl, ...(opts.key ? { key: opts.key } : {}) },
      ctx.env,
      ctx.cwd,
    );
    const secretId = await push.findConfigSecret(cfn, opts.stage);
    const current = await push.readCurrentConfig(secrets, secretId);
    const label = `the config of stage ${opts.stage} (${secretId})`;
    const config =
      current.raw === undefined
        ? configFromText(undefined, label, current.problem)
        : configFromText(JSON.stringify(current.raw), label);
    const api = new GatewayApi(target);
    return {
      where: 'stage',
      config,
      apiUrl: target.url,
      appState: (app) => api.app(app),
      reach: (app, ids) => api.reach(app, ids),
    };
  } finally {
    cfn.destroy();
    secrets.destroy();
  }
}

function print(run: Run, checks: readonly Check[]): void {
  const { out } = run;
  const { c } = out;
  const mark = { ok: c.green('ok  '), warn: c.yellow('warn'), fail: c.red('fail') };
  const width = Math.max(...checks.map((k) => k.name.length));
  for (const k of checks) {
    out.line(`${mark[k.status]}  ${k.name.padEnd(width)}  ${k.detail}`);
    if (k.fix && k.status !== 'ok') out.line(`      ${' '.repeat(width)}  ${c.dim('fix:')} ${k.fix}`);
  }
  const n = (s: Check['status']) => checks.filter((k) => k.status === s).length;
  out.line();
  out.line(`${n('ok')} ok, ${n('warn')} warning${n('warn') === 1 ? '' : 's'}, ${n('fail')} failed`);
}

async function doctor(run: Run, opts: DoctorOpts): Promise<void> {
  const inputs =
    opts.stage === undefined
      ? await localInputs(run.ctx, opts)
      : await stageInputs(run.ctx, opts as DoctorOpts & { stage: string });
  const checks = await runDoctor(inputs);
  run.out.data({ where: inputs.where, apiUrl: inputs.apiUrl, checks });
  print(run, checks);
  run.ctx.exitCode = doctorExitCode(checks);
}

export function registerDoctor(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check the local stack (or a deployed stage): config, gettoken, app state, trusted IP, callback, visible range, WeChat plugin; each line ok/warn/fail with the fix (exit 1 if any fails)',
    )
    .option(
      '--stage <stage>',
      'a deployed stage (stack wecom-gateway-<stage>): URL and config from the stack',
    )
    .option('-f, --file <path>', 'local: config file (default: $GATEWAY_CONFIG, else .local/gateway.json)')
    .option('--url <url>', 'local: gateway URL (default: $WECOM_GATEWAY_URL, else the running npm start)')
    .option('--key <key>', 'API key (default: $WECOM_GATEWAY_KEY; locally the dev key)')
    .option('--region <region>', 'with --stage: AWS region of the stack')
    .option('--profile <profile>', 'with --stage: AWS profile')
    .addHelpText(
      'after',
      "\nWith --stage, gettoken and the trusted IP are judged from the gateway's own token state (GET /v1/apps/{app}),\ni.e. from the stage's egress, not from this machine; so is the visible range (GET /v1/apps/{app}/reach: WeCom's\nagent/get, which answers only the trusted IP).\nExamples:\n  $ wecom-gateway doctor\n  $ WECOM_GATEWAY_KEY=wgw_… wecom-gateway doctor --stage prod",
    )
    .action(action(ctx, doctor));
}
