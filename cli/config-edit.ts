import { join, resolve } from 'node:path';
import { DEV_CONFIG_FILE, readStackInfo } from '#local/local-dir.js';
import { type CliContext, confirm, type Run } from './command.js';
import { describeDiff } from './config-diff.js';
import { type ConfigDoc, configText, parseDoc, readConfigDoc, writeFileAtomic } from './config-file.js';
import type { AwsClients, PushPlan } from './config-push.js';
import { ConfigError, parseConfig } from './domain.js';
import { CliError, UsageError } from './errors.js';
import { STAGE } from './stack.js';
import { DEFAULT_LOCAL_URL } from './target.js';

/** Where an edit goes: a config file, or a deployed stage's config secret (through `config push`). */
export interface EditTarget {
  file?: string;
  stage?: string;
  region?: string;
  profile?: string;
  yes?: boolean;
  /** The gateway's base URL for the printed webhook URL (local files only; a stage has its ApiUrl). */
  url?: string;
}

export interface EditResult {
  /** `file config.prod.json` or `stage prod (secret …)`. */
  where: string;
  /** The gateway's base URL, without a trailing slash. */
  apiUrl: string;
  /** False when the operator declined the push: nothing was stored. */
  stored: boolean;
  /** The file written, for a file edit. */
  file?: string;
  /** The URL is only `npm start`'s default (none running, no --url): right for the local stack alone. */
  urlGuessed?: boolean;
}

/** `--file`, else $GATEWAY_CONFIG, else `npm start`'s `.local/gateway.json` (the same default as `config check`). */
export const defaultConfigPath = (ctx: CliContext, file: string | undefined): string =>
  file ?? ctx.env.GATEWAY_CONFIG ?? join('.local', DEV_CONFIG_FILE);

/**
 * Validates the edited document with the gateway's own schema. An issue caused by the new entry is a mistake in the
 * command line (exit 2, naming the flag); `flagFor` maps its field to the flag.
 */
function validated(
  raw: Record<string, unknown>,
  label: string,
  flagFor: (field: string) => string | undefined,
) {
  try {
    return parseConfig(raw, label);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) {
      const flag = flagFor(issue.field);
      if (flag) throw new UsageError(`${flag}: ${issue.message}`);
    }
    throw new CliError('config_invalid', `the edited ${label} would not be a valid config`, err.issues);
  }
}

export interface Edit {
  /** Changes the raw document in place; throws a UsageError when the entry cannot be added (name taken…). */
  apply: (doc: ConfigDoc, label: string) => void;
  flagFor: (field: string) => string | undefined;
}

/**
 * Applies one edit to the config, keeping everything else of the document as it was (the raw JSON is edited, not
 * the schema's output with its defaults). A file is replaced atomically; a stage goes through `config push`: its
 * diff, the confirmation (or `--yes`), then the secret's new version.
 */
export async function editConfig(run: Run, target: EditTarget, edit: Edit): Promise<EditResult> {
  if (target.file !== undefined && target.stage !== undefined) {
    throw new UsageError('give --file or --stage, not both');
  }
  if (target.stage === undefined) {
    if (target.region || target.profile) throw new UsageError('--region and --profile need --stage');
    return editFile(run, target, edit);
  }
  if (!STAGE.test(target.stage)) {
    throw new UsageError(
      `--stage must match ${STAGE} (the CDK app's rule), got ${JSON.stringify(target.stage)}`,
    );
  }
  if (target.url) throw new UsageError('--url is for a local file; with --stage the URL is the stack ApiUrl');
  if (!target.yes && run.ctx.stdin.isTTY !== true) {
    throw new UsageError('not a terminal, so nothing can be confirmed: pass --yes to push without asking');
  }
  return editStage(run, target as EditTarget & { stage: string }, edit);
}

async function editFile(run: Run, target: EditTarget, edit: Edit): Promise<EditResult> {
  const label = defaultConfigPath(run.ctx, target.file);
  const path = resolve(run.ctx.cwd, label);
  const doc = await readConfigDoc(path);
  edit.apply(doc, label);
  validated(doc.raw, label, edit.flagFor);
  const running = target.url ? undefined : (await readStackInfo(join(run.ctx.cwd, '.local')))?.apiUrl;
  const apiUrl = target.url ?? running ?? DEFAULT_LOCAL_URL;
  await writeFileAtomic(path, configText(doc.raw));
  return {
    where: label,
    apiUrl: apiUrl.replace(/\/+$/, ''),
    stored: true,
    file: label,
    ...(target.url || running ? {} : { urlGuessed: true }),
  };
}

async function editStage(run: Run, target: EditTarget & { stage: string }, edit: Edit): Promise<EditResult> {
  const { out, ctx } = run;
  // Loaded here so that file edits never pay for the AWS SDK.
  const [{ CloudFormationClient }, { SecretsManagerClient }] = await Promise.all([
    import('@aws-sdk/client-cloudformation'),
    import('@aws-sdk/client-secrets-manager'),
  ]);
  const clientConfig = {
    ...(target.region ? { region: target.region } : {}),
    ...(target.profile ? { profile: target.profile } : {}),
  };
  const cfn = new CloudFormationClient(clientConfig);
  const secrets = new SecretsManagerClient(clientConfig);
  try {
    const result = await editStageWith(
      { cfn, secrets },
      {
        stage: target.stage,
        edit,
        progress: (s) => out.progress(s),
        confirm: async (plan) => {
          out.clearProgress();
          out.note(`${out.ce.bold(plan.stack)}: config secret ${plan.secretId}`);
          for (const l of describeDiff(plan.diff, out.ce)) out.note(`  ${l}`);
          return target.yes === true || (await confirm(ctx, `push this change to ${plan.stack}?`));
        },
      },
    );
    out.clearProgress();
    return result;
  } finally {
    cfn.destroy();
    secrets.destroy();
  }
}

/**
 * The stage edit with its AWS clients given (tests pass mocks): read the stored config from the secret the stack
 * names, edit it, and write it through {@link pushConfig}, which shows the diff and asks.
 */
export async function editStageWith(
  clients: AwsClients,
  args: {
    stage: string;
    edit: Edit;
    confirm: (plan: PushPlan) => Promise<boolean>;
    progress?: (s: string) => void;
  },
): Promise<EditResult> {
  // Loaded here so that file edits never pay for the AWS SDK.
  const push = await import('./config-push.js');
  const progress = args.progress ?? (() => undefined);
  progress(`looking up stack ${push.stackName(args.stage)}…`);
  const outputs = await push.stackOutputs(clients.cfn, args.stage);
  const secretId = outputs[push.CONFIG_SECRET_OUTPUT];
  const apiUrl = outputs.ApiUrl;
  if (!secretId || !apiUrl) {
    throw new CliError(
      'stack_output_missing',
      `stack ${push.stackName(args.stage)} has no ${secretId ? 'ApiUrl' : push.CONFIG_SECRET_OUTPUT} output (is it a wecom-gateway stack, fully deployed?)`,
    );
  }
  progress(`reading the current config from ${secretId}…`);
  const current = await push.readCurrentConfig(clients.secrets, secretId);
  if (!current.config || !current.raw) {
    throw new CliError(
      'config_invalid',
      `the config stored in ${secretId} cannot be edited: ${current.problem ?? 'unknown problem'} (store a valid one first: wecom-gateway config push --stage ${args.stage} --file <file>)`,
    );
  }
  const label = `the config of stage ${args.stage}`;
  const doc = parseDoc(JSON.stringify(current.raw), label);
  args.edit.apply(doc, label);
  const config = validated(doc.raw, label, args.edit.flagFor);
  const result = await push.pushConfig(clients, {
    stage: args.stage,
    config,
    text: configText(doc.raw),
    confirm: args.confirm,
    progress,
  });
  return {
    where: `stage ${args.stage} (${secretId})`,
    apiUrl: apiUrl.replace(/\/+$/, ''),
    stored: result.pushed,
  };
}
