import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { GatewayEnv } from './env.js';
import { ConfigError } from './errors.js';
import { parseConfigJson } from './parse.js';
import type { GatewayConfig } from './schema.js';

/** Reads the config from the file in GATEWAY_CONFIG (local) or the Secrets Manager secret (AWS). */
export async function loadConfig(
  env: Pick<GatewayEnv, 'configFile' | 'configSecretId'>,
  secrets: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({}),
): Promise<GatewayConfig> {
  if (env.configFile) {
    let text: string;
    try {
      text = await readFile(env.configFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${env.configFile}: ${(err as Error).message}`, [], {
        cause: err,
      });
    }
    return parseConfigJson(text, `config file ${env.configFile}`);
  }
  if (env.configSecretId) {
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: env.configSecretId }));
    if (!out.SecretString) throw new ConfigError(`secret ${env.configSecretId} has no string value`);
    return parseConfigJson(out.SecretString, `secret ${env.configSecretId}`);
  }
  throw new ConfigError(
    'no configuration source: set GATEWAY_CONFIG (file) or CONFIG_SECRET_ID (Secrets Manager)',
  );
}
