/**
 * What the integration tests and the benchmarks both need from the local stack, so neither imports the other's
 * helpers: a config for a throwaway stack (here) and sender "containers" and queue probes (`./sender.ts`).
 */

import { createHash } from 'node:crypto';
import type { GatewayConfig } from '#lib/config/index.js';
import { QUOTA_DEFAULTS, ROBOT_QUOTA_DEFAULTS } from '#lib/config/index.js';
import { WEBHOOK_EVENT_TYPES } from '#lib/webhooks/payloads.js';
import type { DevKey } from '#local/dev-config.js';

/** Every test app's callback settings (as WeCom's admin console shows them) and webhook signing secret. */
export const TEST_CALLBACK = {
  token: 'Vz3kqT9bLmXr',
  encodingAESKey: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
} as const;
/** The corp of every test app. */
export const TEST_CORP_ID = 'wwtest00000000001';
export const TEST_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A test robot's key: shaped like WeCom's (a UUID), derived from its name so a run can tell robots apart. */
export function testRobotKey(name: string): string {
  const h = createHash('sha256').update(`robot ${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A config with app `ops` (and optionally more), optionally group robots, and one key for all of them. */
export function testConfig(
  key: DevKey,
  opts: {
    apps?: string[];
    quota?: Partial<GatewayConfig['apps'][string]['quota']>;
    /** Per app (by name): delivery settings (budget, configuration-error hold, duplicate-check interval). */
    delivery?: Record<string, NonNullable<GatewayConfig['apps'][string]['delivery']>>;
    /** Overrides of every app's webhook block (e.g. a default `url`, an `events` filter). */
    webhook?: Partial<NonNullable<GatewayConfig['apps'][string]['webhook']>>;
    /** Per app (by name): sizes of broadcasts it may not resolve through WeCom's contacts. */
    broadcast?: Record<string, NonNullable<GatewayConfig['apps'][string]['broadcast']>>;
    /** Group robots by name, each with its {@link testRobotKey} and WeCom's 20 a minute. */
    robots?: string[];
  } = {},
): GatewayConfig {
  const names = opts.apps ?? ['ops'];
  const robots = opts.robots ?? [];
  return {
    apps: Object.fromEntries(
      names.map((name, i) => [
        name,
        {
          corpId: TEST_CORP_ID,
          agentId: 1000002 + i,
          secret: `secret-${name}-0123456789`,
          quota: { ...QUOTA_DEFAULTS, ...opts.quota },
          ...(opts.delivery?.[name] ? { delivery: opts.delivery[name] } : {}),
          callback: { ...TEST_CALLBACK },
          webhook: {
            secrets: [TEST_WEBHOOK_SECRET],
            allowedPorts: [],
            events: [...WEBHOOK_EVENT_TYPES],
            ...opts.webhook,
          },
          ...(opts.broadcast?.[name] ? { broadcast: opts.broadcast[name] } : {}),
        },
      ]),
    ),
    apiKeys: [
      {
        name: 'test',
        sha256: key.sha256,
        apps: names,
        ...(robots.length > 0 ? { robots } : {}),
        scopes: ['messages:write', 'messages:read', 'messages:recall'],
      },
    ],
    ...(robots.length > 0
      ? {
          robots: Object.fromEntries(
            robots.map((name) => [name, { key: testRobotKey(name), quota: { ...ROBOT_QUOTA_DEFAULTS } }]),
          ),
        }
      : {}),
    retentionDays: 30,
    idempotencyHours: 24,
    allowLoopbackWebhooks: true,
  };
}
