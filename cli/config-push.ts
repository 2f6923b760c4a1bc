import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { type ConfigDiff, diffConfigs, isEmptyDiff } from './config-diff.js';
import { ConfigError, type GatewayConfig, parseConfig } from './domain.js';
import { AwsError, type CliError } from './errors.js';

/** infra/build-app.ts names the stack `wecom-gateway-<stage>`; infra/gateway-stack.ts outputs the secret name. */
export const stackName = (stage: string): string => `wecom-gateway-${stage}`;
export const CONFIG_SECRET_OUTPUT = 'ConfigSecretName';

export interface AwsClients {
  cfn: Pick<CloudFormationClient, 'send'>;
  secrets: Pick<SecretsManagerClient, 'send'>;
}

/** Turns the SDK's errors into messages an operator can act on (credentials, region, permissions). */
export function awsFailure(err: unknown, doing: string): CliError {
  const name = (err as { name?: string }).name ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
    return new AwsError(
      'aws_credentials',
      `${doing}: no AWS credentials (${message}); use aws configure, AWS_PROFILE or --profile`,
      { cause: err },
    );
  }
  if (/region is missing/i.test(message)) {
    return new AwsError('aws_region', `${doing}: no AWS region; pass --region or set AWS_REGION`, {
      cause: err,
    });
  }
  if (name === 'AccessDeniedException' || name === 'AccessDenied') {
    return new AwsError('aws_access_denied', `${doing}: access denied (${message})`, { cause: err });
  }
  return new AwsError('aws_error', `${doing}: ${name ? `${name}: ` : ''}${message}`, { cause: err });
}

/** The deployed stack's outputs by key; a clear error when the stack is not there or cannot be read. */
export async function stackOutputs(
  cfn: AwsClients['cfn'],
  stage: string,
): Promise<Record<string, string | undefined>> {
  const name = stackName(stage);
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: name }));
    return Object.fromEntries(
      (res.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue]),
    );
  } catch (err) {
    // CloudFormation answers a missing stack with a ValidationError "Stack with id … does not exist".
    if (/does not exist/.test((err as Error).message ?? '')) {
      throw new AwsError(
        'stack_not_found',
        `stack ${name} not found in this account/region (deploy it with: npx cdk deploy -c stage=${stage}; or check --region)`,
        { cause: err },
      );
    }
    throw awsFailure(err, `reading stack ${name}`);
  }
}

/** The Secrets Manager secret holding the stage's config, from the stack's `ConfigSecretName` output. */
export async function findConfigSecret(cfn: AwsClients['cfn'], stage: string): Promise<string> {
  const secret = (await stackOutputs(cfn, stage))[CONFIG_SECRET_OUTPUT];
  if (!secret) {
    throw new AwsError(
      'stack_output_missing',
      `stack ${stackName(stage)} has no ${CONFIG_SECRET_OUTPUT} output (is it a wecom-gateway stack, fully deployed?)`,
    );
  }
  return secret;
}

export interface CurrentConfig {
  /** The stored config validated with the schema, when it is one. */
  config?: GatewayConfig;
  /** Why the stored value is not a valid config (no value yet, not JSON, schema issues). */
  problem?: string;
  /** The stored document as JSON when it parses, valid or not (the diff falls back to it). */
  raw?: unknown;
}

export async function readCurrentConfig(
  secrets: AwsClients['secrets'],
  secretId: string,
): Promise<CurrentConfig> {
  let text: string | undefined;
  try {
    text = (await secrets.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  } catch (err) {
    // A secret without any version yet: nothing to compare with, everything is new.
    if ((err as { name?: string }).name === 'ResourceNotFoundException')
      return { problem: 'it has no value yet' };
    throw awsFailure(err, `reading secret ${secretId}`);
  }
  if (text === undefined) return { problem: 'it holds no string value' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: 'it is not JSON' };
  }
  try {
    return { config: parseConfig(raw), raw };
  } catch (err) {
    if (err instanceof ConfigError)
      return { raw, problem: `it is not a valid config (${err.issues.length} issues)` };
    throw err;
  }
}

export interface PushPlan {
  stage: string;
  stack: string;
  secretId: string;
  diff: ConfigDiff;
  /** Set when the stored value could not be compared field by field. */
  currentProblem?: string;
}

export interface PushResult extends PushPlan {
  pushed: boolean;
  /** Why nothing was written. */
  skipped?: 'no_changes' | 'declined';
  versionId?: string;
}

/**
 * `config push`: locate the stage's secret, diff the stored config against the new one, let `confirm` decide,
 * then PutSecretValue. `text` must already be validated (the caller shows schema errors with the file name).
 *
 * @example await pushConfig(clients, { stage: 'prod', config, text, confirm: async () => true })
 */
export async function pushConfig(
  clients: AwsClients,
  args: {
    stage: string;
    config: GatewayConfig;
    text: string;
    confirm: (plan: PushPlan) => Promise<boolean>;
    progress?: (step: string) => void;
  },
): Promise<PushResult> {
  const progress = args.progress ?? (() => undefined);
  progress(`looking up stack ${stackName(args.stage)}…`);
  const secretId = await findConfigSecret(clients.cfn, args.stage);
  progress(`reading the current config from ${secretId}…`);
  const current = await readCurrentConfig(clients.secrets, secretId);
  const plan: PushPlan = {
    stage: args.stage,
    stack: stackName(args.stage),
    secretId,
    diff: diffConfigs(current.config ?? current.raw, args.config),
    ...(current.problem ? { currentProblem: current.problem } : {}),
  };
  if (current.config && isEmptyDiff(plan.diff)) return { ...plan, pushed: false, skipped: 'no_changes' };
  if (!(await args.confirm(plan))) return { ...plan, pushed: false, skipped: 'declined' };
  progress(`writing ${secretId}…`);
  try {
    const out = await clients.secrets.send(
      new PutSecretValueCommand({ SecretId: secretId, SecretString: args.text }),
    );
    return { ...plan, pushed: true, ...(out.VersionId ? { versionId: out.VersionId } : {}) };
  } catch (err) {
    throw awsFailure(err, `writing secret ${secretId}`);
  }
}
