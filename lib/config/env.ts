import { DEFAULT_WECOM_API_BASE, ENV } from '#lib/resources/index.js';
import { MissingEnvError } from './errors.js';

/** Everything the functions read from their environment. The only module that touches `process.env`. */
export interface GatewayEnv {
  readonly tableName: string;
  readonly queueUrls: { readonly high: string; readonly normal: string };
  readonly wecomApiBase: string;
  readonly configFile?: string;
  readonly configSecretId?: string;
  readonly logLevel: string;
  /** Deployment stage; scopes the metric namespace. `local` when unset (the offline stack). */
  readonly stage: string;
  readonly region?: string;
}

const required = (env: NodeJS.ProcessEnv, name: string): string => {
  const value = env[name];
  if (!value) throw new MissingEnvError(name);
  return value;
};

export function readEnv(env: NodeJS.ProcessEnv = process.env): GatewayEnv {
  const configFile = env[ENV.configFile] || undefined;
  const configSecretId = env[ENV.configSecretId] || undefined;
  if (!configFile && !configSecretId) throw new MissingEnvError(`${ENV.configFile} or ${ENV.configSecretId}`);
  return {
    tableName: required(env, ENV.tableName),
    queueUrls: { high: required(env, ENV.queueUrlHigh), normal: required(env, ENV.queueUrlNormal) },
    wecomApiBase: (env[ENV.wecomApiBase] || DEFAULT_WECOM_API_BASE).replace(/\/+$/, ''),
    ...(configFile ? { configFile } : {}),
    ...(configSecretId ? { configSecretId } : {}),
    logLevel: env[ENV.logLevel] || 'info',
    stage: env[ENV.stage] || 'local',
    ...(env.AWS_REGION ? { region: env.AWS_REGION } : {}),
  };
}
