import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type GatewayConfig, QUOTA_DEFAULTS, ROBOT_QUOTA_DEFAULTS } from '#lib/config/index.js';
import { WEBHOOK_EVENT_TYPES } from '#lib/webhooks/payloads.js';
import { generateWebhookSecret } from '#lib/webhooks/signature.js';
import { DEV_CONFIG_FILE, DEV_KEY_FILE } from './local-dir.js';

/** A generated API key: the plaintext (printed once to the developer) and the config holding only its hash. */
export interface DevKey {
  key: string;
  sha256: string;
}

export const newDevKey = (): DevKey => {
  const key = `wgw_dev_${randomBytes(18).toString('base64url')}`;
  return { key, sha256: createHash('sha256').update(key).digest('hex') };
};

/**
 * The minimal config of SPEC §3 for the offline stack: one app `ops`, one group robot `oncall` (the simulator plays
 * its group chat) and one key for both.
 */
export function devConfig(key: DevKey): GatewayConfig {
  return {
    apps: {
      ops: {
        corpId: 'wwlocal000000000001',
        agentId: 1000002,
        secret: randomBytes(24).toString('base64url'),
        quota: { ...QUOTA_DEFAULTS },
        // What WeCom's admin console would show under 接收消息 › API接收: the simulator signs with these.
        callback: {
          token: randomBytes(12).toString('base64url'),
          // 43 base64 characters: 32 random bytes without the padding "=".
          encodingAESKey: randomBytes(32).toString('base64').replace(/=+$/, ''),
        },
        webhook: { secrets: [generateWebhookSecret()], allowedPorts: [], events: [...WEBHOOK_EVENT_TYPES] },
      },
    },
    // A key shaped like WeCom's (a UUID); the simulator knows it from this config.
    robots: { oncall: { key: randomUUID(), quota: { ...ROBOT_QUOTA_DEFAULTS } } },
    apiKeys: [
      {
        name: 'dev',
        sha256: key.sha256,
        apps: ['ops'],
        robots: ['oncall'],
        // The local stack is the developer's own: its key may also use the DLQ routes (the console's DLQ page).
        scopes: ['messages:write', 'messages:read', 'messages:recall', 'admin'],
      },
    ],
    retentionDays: 30,
    idempotencyHours: 24,
    allowLoopbackWebhooks: true,
  };
}

/**
 * Loads (or creates on first run) `.local/gateway.json` and `.local/dev-api-key`, so the dev key survives
 * restarts and the curl examples keep working. Both are git-ignored.
 */
export async function ensureDevConfig(dir: string): Promise<{ configFile: string; apiKey: string }> {
  const configFile = `${dir}/${DEV_CONFIG_FILE}`;
  const keyFile = `${dir}/${DEV_KEY_FILE}`;
  try {
    const apiKey = (await readFile(keyFile, 'utf8')).trim();
    await readFile(configFile, 'utf8');
    return { configFile, apiKey };
  } catch {
    const key = newDevKey();
    await mkdir(dirname(configFile), { recursive: true });
    await writeFile(configFile, `${JSON.stringify(devConfig(key), null, 2)}\n`, { mode: 0o600 });
    await writeFile(keyFile, `${key.key}\n`, { mode: 0o600 });
    return { configFile, apiKey: key.key };
  }
}
