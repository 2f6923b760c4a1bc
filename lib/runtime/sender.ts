import type { ConfigSource, GatewayEnv } from '#lib/config/index.js';
import { QuotaGuard, WECOM_WINDOWS } from '#lib/quota/index.js';
import { MAX_RECEIVE_COUNT } from '#lib/resources/index.js';
import { PauseCache, type SenderDeps } from '#lib/sender/index.js';
import {
  DynamoDirectoryStore,
  DynamoMediaStore,
  DynamoPauseStore,
  DynamoQuotaStore,
} from '#lib/store/index.js';
import { BroadcastDirectory, RobotClient, RobotMediaCache } from '#lib/wecom/index.js';
import { createUndiciWecomClient } from '#lib/wecom/undici.js';
import { buildCommonDeps, type Closable, type RuntimeOptions } from './shared.js';
import { buildWecomDeps } from './wecom.js';

/** Everything the sender function needs, built once per container. */
export async function createSenderDeps(
  opts: RuntimeOptions = {},
): Promise<SenderDeps & Closable & { env: GatewayEnv; configSource: ConfigSource }> {
  const common = await buildCommonDeps('sender', opts);
  const s = {
    ...common,
    ...buildWecomDeps(common, opts, (env, userAgent) =>
      createUndiciWecomClient({ ...opts.wecom, baseUrl: env.wecomApiBase, userAgent }),
    ),
  };
  // Robots go to the same host as apps: one pool of sockets for both.
  const robots = new RobotClient(s.wecom.transport);
  return {
    env: s.env,
    // Read on every use: the config source swaps in a re-read config (lib/config/source.ts).
    get config() {
      return s.configSource.current;
    },
    configSource: s.configSource,
    messages: s.messages,
    queue: s.queue,
    tokens: s.tokens,
    quota: new QuotaGuard(new DynamoQuotaStore(s.db, s.env.tableName), {
      windows: opts.windows ?? WECOM_WINDOWS,
      ...(opts.slotWaitMs !== undefined ? { inlineWaitMs: opts.slotWaitMs } : {}),
      ...(opts.slotLatenessMs !== undefined ? { maxLatenessMs: opts.slotLatenessMs } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      // Share of the gateway's per-minute API budget in use: the figure to watch before WeCom says 45009.
      onUsage: (_app, _scope, used, limit) =>
        s.metrics.gauge('QuotaUtilisation', Math.round((100 * used) / limit)),
    }),
    broadcasts: new BroadcastDirectory(new DynamoDirectoryStore(s.db, s.env.tableName), s.wecom, {
      ...(opts.directoryRefreshMs !== undefined ? { refreshMs: opts.directoryRefreshMs } : {}),
    }),
    pauses: new PauseCache(new DynamoPauseStore(s.db, s.env.tableName), opts.now ? { now: opts.now } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.windows ? { windows: opts.windows } : {}),
    ...(opts.configProbeMs ? { configProbeMs: opts.configProbeMs } : {}),
    wecom: s.wecom,
    robots,
    robotMedia: new RobotMediaCache(new DynamoMediaStore(s.db, s.env.tableName), robots),
    logger: s.logger,
    metrics: s.metrics,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    close: () => s.wecom.close(),
    ...(opts.retry ? { retry: opts.retry } : {}),
    ...(opts.deferJitterSeconds !== undefined ? { deferJitterSeconds: opts.deferJitterSeconds } : {}),
    ...(opts.rateLimitPauseMs !== undefined ? { rateLimitPauseMs: opts.rateLimitPauseMs } : {}),
  };
}
