import { DEFAULT_WECOM_API_BASE, ENV, type ReleaseTimerTarget } from '#lib/resources/index.js';
import { MissingEnvError } from './errors.js';

/** What every function reads from its environment. This file is the only module that touches `process.env`. */
export interface FunctionEnv {
  readonly tableName: string;
  /** The notify queue: webhook jobs are queued only when it is set (ingest, sender, callback; notify reads it). */
  readonly notifyQueueUrl?: string;
  /** The notify DLQ: only the notify function uses it. */
  readonly notifyDlqUrl?: string;
  readonly wecomApiBase: string;
  readonly configFile?: string;
  readonly configSecretId?: string;
  readonly logLevel: string;
  /** Deployment stage; scopes the metric namespace. `local` when unset (the offline stack). */
  readonly stage: string;
  readonly region?: string;
}

/** The environment of the functions that use the priority lanes (ingest, sender). */
export interface GatewayEnv extends FunctionEnv {
  readonly queueUrls: { readonly high: string; readonly normal: string };
  /** The lanes' dead-letter queues, when the function was given both (ingest: `/v1/dlq`). */
  readonly deadLetterQueueUrls?: { readonly high: string; readonly normal: string };
  /** Where release timers send (ingest sets them for messages scheduled beyond SQS's 15-minute delay). */
  readonly releaseTimers?: ReleaseTimerTarget;
}

const required = (env: NodeJS.ProcessEnv, name: string): string => {
  const value = env[name];
  if (!value) throw new MissingEnvError(name);
  return value;
};

/** The environment of a function without the lanes (callback, notify). */
export function readFunctionEnv(env: NodeJS.ProcessEnv = process.env): FunctionEnv {
  const configFile = env[ENV.configFile] || undefined;
  const configSecretId = env[ENV.configSecretId] || undefined;
  if (!configFile && !configSecretId) throw new MissingEnvError(`${ENV.configFile} or ${ENV.configSecretId}`);
  return {
    tableName: required(env, ENV.tableName),
    ...(env[ENV.notifyQueueUrl] ? { notifyQueueUrl: env[ENV.notifyQueueUrl] } : {}),
    ...(env[ENV.notifyDlqUrl] ? { notifyDlqUrl: env[ENV.notifyDlqUrl] } : {}),
    wecomApiBase: (env[ENV.wecomApiBase] || DEFAULT_WECOM_API_BASE).replace(/\/+$/, ''),
    ...(configFile ? { configFile } : {}),
    ...(configSecretId ? { configSecretId } : {}),
    logLevel: env[ENV.logLevel] || 'info',
    stage: env[ENV.stage] || 'local',
    ...(env.AWS_REGION ? { region: env.AWS_REGION } : {}),
  };
}

/** The environment of ingest and the sender: the common part plus both lanes' queue URLs. */
export function readEnv(env: NodeJS.ProcessEnv = process.env): GatewayEnv {
  const common = readFunctionEnv(env);
  const dlqHigh = env[ENV.dlqUrlHigh];
  const dlqNormal = env[ENV.dlqUrlNormal];
  // Both or neither: a function given one lane's DLQ would list and redrive only half of the dead messages.
  if (Boolean(dlqHigh) !== Boolean(dlqNormal))
    throw new MissingEnvError(dlqHigh ? ENV.dlqUrlNormal : ENV.dlqUrlHigh);
  const timers = env[ENV.releaseTimers];
  return {
    ...common,
    queueUrls: { high: required(env, ENV.queueUrlHigh), normal: required(env, ENV.queueUrlNormal) },
    ...(dlqHigh && dlqNormal ? { deadLetterQueueUrls: { high: dlqHigh, normal: dlqNormal } } : {}),
    ...(timers ? { releaseTimers: parseReleaseTimers(timers) } : {}),
  };
}

/** The release timers' settings, as infra writes them (JSON); a value that is not fails the cold start by name. */
function parseReleaseTimers(text: string): ReleaseTimerTarget {
  try {
    const t = JSON.parse(text) as ReleaseTimerTarget;
    if (typeof t.groupName === 'string' && typeof t.roleArn === 'string' && t.laneArns && t.retry) return t;
  } catch {
    // Reported below.
  }
  throw new MissingEnvError(`${ENV.releaseTimers} (JSON of the release timers' target)`);
}

/** A value the function cannot run without (e.g. the notify queue URL for the notify function). */
export function requireEnvValue<T>(value: T | undefined, name: string): T {
  if (value === undefined || value === '') throw new MissingEnvError(name);
  return value;
}
