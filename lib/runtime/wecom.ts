import type { GatewayEnv } from '#lib/config/index.js';
import { DynamoTokenStore } from '#lib/store/token-store.js';
import { TokenCache, type TokenCacheOptions, type WecomClient } from '#lib/wecom/index.js';
import type { Base, RuntimeOptions } from './shared.js';

/** A function's way to WeCom: its client, and the token cache every container shares through the table. */
export interface WecomDeps {
  wecom: WecomClient;
  tokens: TokenCache;
}

/**
 * Builds the WeCom client and the token cache the same way for the sender (at cold start) and ingest (with the rest
 * of its ports for routes other than sending, on the first request to one: ./ingest-lazy.ts).
 */
export function buildWecomDeps(
  base: Pick<Base<GatewayEnv>, 'env' | 'db' | 'metrics'> & { service: string },
  opts: RuntimeOptions,
  /** Builds the WeCom client; `userAgent` names the function to WeCom (and to a proxy or the simulator). */
  wecomFor: (env: GatewayEnv, userAgent: string) => WecomClient,
  tokenOpts: Pick<TokenCacheOptions, 'maxWaitMs'> = {},
): WecomDeps {
  const { env, db, metrics } = base;
  const wecom = wecomFor(env, `wecom-gateway/${base.service}`);
  const tokens = new TokenCache(new DynamoTokenStore(db, env.tableName), wecom, {
    ...tokenOpts,
    ...(opts.tokenLeaseMs ? { leaseMs: opts.tokenLeaseMs } : {}),
    ...(opts.tokenBackoff ? { backoff: opts.tokenBackoff } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    onFetch: () => metrics.count('GetTokenCalls'),
  });
  return { wecom, tokens };
}
