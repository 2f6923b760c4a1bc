import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, parseConfigJson, QUOTA_DEFAULTS } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

/** The field names a ConfigError reports, so a test can say which field was blamed. */
function blamedFields(input: unknown): string[] {
  try {
    parseConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => i.field);
    throw err;
  }
  throw new Error('parseConfig accepted the input');
}

describe('parseConfig', () => {
  it("accepts SPEC §3's minimal example and fills every default", () => {
    const input = minimalConfig();

    const config = parseConfig(input);

    expect(config.apps.ops).toMatchObject({ corpId: 'ww0123456789abcdef', agentId: 1000002 });
    expect(config.apps.ops?.quota).toEqual({ ...QUOTA_DEFAULTS, perHour: 150_000 });
    expect(config.apiKeys[0]?.scopes).toEqual(['messages:write', 'messages:read', 'messages:recall']);
    expect(config).toMatchObject({ retentionDays: 30, idempotencyHours: 24, allowLoopbackWebhooks: false });
  });

  it('fills quota defaults for an app that has no quota block at all', () => {
    const input = minimalConfig();
    delete (input.apps.ops as { quota?: unknown }).quota;

    const config = parseConfig(input);

    expect(config.apps.ops?.quota).toEqual(QUOTA_DEFAULTS);
  });

  it('names apps.ops.agentId when the agentId is a string', () => {
    const input = minimalConfig();
    (input.apps.ops as Record<string, unknown>).agentId = '1000002';

    expect(blamedFields(input)).toEqual(['apps.ops.agentId']);
  });

  it('names apiKeys.0.sha256 when the hash is not 64 lowercase hex characters', () => {
    const input = minimalConfig();
    (input.apiKeys[0] as Record<string, unknown>).sha256 = 'ABC';

    expect(blamedFields(input)).toEqual(['apiKeys.0.sha256']);
  });

  it('names apps.ops.callback.encodingAESKey when the key is not 43 base64 characters', () => {
    const input = minimalConfig();
    input.apps.ops.callback.encodingAESKey = 'too-short';

    expect(blamedFields(input)).toEqual(['apps.ops.callback.encodingAESKey']);
  });

  it('names an unknown top-level key', () => {
    const input = { ...minimalConfig(), apikeys: [] };

    expect(blamedFields(input)).toEqual(['apikeys']);
  });

  it('names apiKeys when a key lists an app that is not configured', () => {
    const input = minimalConfig();
    input.apiKeys[0]?.apps.push('billing');

    expect(blamedFields(input)).toEqual(['apiKeys']);
  });

  it('names apiKeys when a key lists an inherited Object property as its app', () => {
    const input = minimalConfig();
    input.apiKeys[0]?.apps.push('constructor');

    expect(blamedFields(input)).toEqual(['apiKeys']);
  });

  it('puts every bad field in the error message', () => {
    const input = minimalConfig();
    (input.apps.ops as Record<string, unknown>).agentId = 0;
    (input.apiKeys[0] as Record<string, unknown>).sha256 = 'nope';

    expect(() => parseConfig(input)).toThrow(/apps\.ops\.agentId[\s\S]*apiKeys\.0\.sha256/);
  });
});

describe('parseConfigJson', () => {
  it('turns invalid JSON into a ConfigError naming the source', () => {
    const text = '{"apps": ';

    const act = () => parseConfigJson(text, 'config file /etc/gw.json');

    expect(act).toThrow(ConfigError);
    expect(act).toThrow(/config file \/etc\/gw\.json is not valid JSON/);
  });
});

describe('parseConfig placeholder', () => {
  it('accepts the placeholder a fresh CDK deployment stores ({"apps":{},"apiKeys":[]})', () => {
    const config = parseConfig({ apps: {}, apiKeys: [] });
    expect(config.apps).toEqual({});
    expect(config.apiKeys).toEqual([]);
  });
});
