import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

/** A Secrets Manager client double: answers every GetSecretValue with `SecretString` and records the input. */
function secretsDouble(SecretString: string | undefined) {
  const requests: unknown[] = [];
  return {
    requests,
    send: async (command: GetSecretValueCommand) => {
      requests.push(command.input);
      return { SecretString };
    },
  };
}

describe('loadConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads and validates the JSON file named by GATEWAY_CONFIG', async () => {
    const configFile = join(dir, 'gateway.json');
    await writeFile(configFile, JSON.stringify(minimalConfig()));

    const config = await loadConfig({ configFile }, secretsDouble(undefined) as never);

    expect(config.apps.ops?.agentId).toBe(1000002);
    expect(config.apps.ops?.quota.normalShare).toBe(0.8);
  });

  it('throws a ConfigError naming the path when the file does not exist', async () => {
    const configFile = join(dir, 'missing.json');

    const loading = loadConfig({ configFile });

    await expect(loading).rejects.toBeInstanceOf(ConfigError);
    await expect(loading).rejects.toThrow(configFile);
  });

  it('names the file when its content is not JSON', async () => {
    const configFile = join(dir, 'broken.json');
    await writeFile(configFile, '{ apps: ');

    await expect(loadConfig({ configFile })).rejects.toThrow(`config file ${configFile} is not valid JSON`);
  });

  it('reads the config from the Secrets Manager secret', async () => {
    const secrets = secretsDouble(JSON.stringify(minimalConfig()));

    const config = await loadConfig({ configSecretId: 'gw/config' }, secrets as never);

    expect(config.apiKeys[0]?.name).toBe('ci');
    expect(secrets.requests).toEqual([{ SecretId: 'gw/config' }]);
  });

  it('names the secret and the bad field when the secret holds an invalid config', async () => {
    const bad = minimalConfig();
    (bad.apps.ops as Record<string, unknown>).agentId = -1;
    const secrets = secretsDouble(JSON.stringify(bad));

    const loading = loadConfig({ configSecretId: 'gw/config' }, secrets as never);

    await expect(loading).rejects.toThrow(/secret gw\/config[\s\S]*apps\.ops\.agentId/);
  });

  it('throws a ConfigError when the secret has no string value', async () => {
    const secrets = secretsDouble(undefined);

    await expect(loadConfig({ configSecretId: 'gw/config' }, secrets as never)).rejects.toBeInstanceOf(
      ConfigError,
    );
  });

  it('throws a ConfigError when no source is configured', async () => {
    await expect(loadConfig({}, secretsDouble(undefined) as never)).rejects.toBeInstanceOf(ConfigError);
  });
});
