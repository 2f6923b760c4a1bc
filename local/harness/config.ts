/**
 * What the integration tests and the benchmarks both need from the local stack, so neither imports the other's
 * helpers: a config for a throwaway stack (here) and sender "containers" and queue probes (`./sender.ts`).
 */
import type { GatewayConfig } from '#lib/config/index.js';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import type { DevKey } from '#local/dev-config.js';

/** A config with app `ops` (and optionally more) and one key for all of them. */
export function testConfig(
  key: DevKey,
  opts: {
    apps?: string[];
    quota?: Partial<GatewayConfig['apps'][string]['quota']>;
    /** Per app (by name): delivery settings (budget, configuration-error hold, duplicate-check interval). */
    delivery?: Record<string, NonNullable<GatewayConfig['apps'][string]['delivery']>>;
  } = {},
): GatewayConfig {
  const names = opts.apps ?? ['ops'];
  return {
    apps: Object.fromEntries(
      names.map((name, i) => [
        name,
        {
          corpId: 'wwtest00000000001',
          agentId: 1000002 + i,
          secret: `secret-${name}-0123456789`,
          quota: { ...QUOTA_DEFAULTS, ...opts.quota },
          ...(opts.delivery?.[name] ? { delivery: opts.delivery[name] } : {}),
        },
      ]),
    ),
    apiKeys: [
      {
        name: 'test',
        sha256: key.sha256,
        apps: names,
        scopes: ['messages:write', 'messages:read', 'messages:recall'],
      },
    ],
    retentionDays: 30,
    idempotencyHours: 24,
    allowLoopbackWebhooks: true,
  };
}
