import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { AWS_MAX_ATTEMPTS, AWS_REQUEST_HANDLER, sendOptions } from '#lib/aws/index.js';
import type { GatewayEnv } from './env.js';
import { ConfigError } from './errors.js';
import { parseConfigJson } from './parse.js';
import type { GatewayConfig } from './schema.js';

/** The config document as stored, and where it came from (for error messages). */
export interface ConfigText {
  readonly text: string;
  readonly source: string;
}

type SecretsClient = Pick<SecretsManagerClient, 'send'>;

/**
 * Reads the config text from the file in GATEWAY_CONFIG (local) or the Secrets Manager secret (AWS), without
 * validating it. Build once per container: the Secrets Manager client is reused by every read.
 */
export function createConfigReader(
  env: Pick<GatewayEnv, 'configFile' | 'configSecretId'>,
  secrets?: SecretsClient,
): () => Promise<ConfigText> {
  const { configFile, configSecretId } = env;
  if (configFile) {
    const source = `config file ${configFile}`;
    return async () => {
      try {
        return { text: await readFile(configFile, 'utf8'), source };
      } catch (err) {
        throw new ConfigError(`cannot read ${source}: ${(err as Error).message}`, [], { cause: err });
      }
    };
  }
  if (configSecretId) {
    const client =
      secrets ??
      new SecretsManagerClient({ maxAttempts: AWS_MAX_ATTEMPTS, requestHandler: AWS_REQUEST_HANDLER });
    const source = `secret ${configSecretId}`;
    return async () => {
      // A re-read during an invocation ends by its deadline; a failed re-read keeps the last good config.
      const out = await client.send(new GetSecretValueCommand({ SecretId: configSecretId }), sendOptions());
      if (!out.SecretString) throw new ConfigError(`${source} has no string value`);
      return { text: out.SecretString, source };
    };
  }
  throw new ConfigError(
    'no configuration source: set GATEWAY_CONFIG (file) or CONFIG_SECRET_ID (Secrets Manager)',
  );
}

/** Reads and validates the config once: from the GATEWAY_CONFIG file (local) or the Secrets Manager secret (AWS). */
export async function loadConfig(
  env: Pick<GatewayEnv, 'configFile' | 'configSecretId'>,
  secrets?: SecretsClient,
): Promise<GatewayConfig> {
  const { text, source } = await createConfigReader(env, secrets)();
  return parseConfigJson(text, source);
}
