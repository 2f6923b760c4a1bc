import type { CallbackVerifier } from '#lib/callback/index.js';
import {
  type ConfigSource,
  type GatewayConfig,
  readFunctionEnv,
  requireEnvValue,
} from '#lib/config/index.js';
import { type CallbackDeps, createVerifiers } from '#lib/receipts/index.js';
import { ENV } from '#lib/resources/index.js';
import { DynamoCardCodeStore, DynamoEventStore } from '#lib/store/index.js';
import { buildBase, type Closable, type RuntimeOptions } from './shared.js';

/**
 * Everything the callback function needs, built once per container: one verifier per app with callback settings
 * (a bad EncodingAESKey fails the cold start, not a callback), the event and card stores, the notify queue. A
 * re-read config (new apps, a new callback token) gets its own verifiers on first use.
 */
export async function createCallbackDeps(
  opts: RuntimeOptions = {},
): Promise<CallbackDeps & Closable & { configSource: ConfigSource }> {
  const s = await buildBase('callback', opts, () => readFunctionEnv());
  const clock = opts.callbackClock ? { now: opts.callbackClock } : {};
  let built: { config: GatewayConfig; verifiers: ReadonlyMap<string, CallbackVerifier> } | undefined;
  const verifiersOf = (config: GatewayConfig) => {
    if (built?.config !== config) built = { config, verifiers: createVerifiers(config, clock) };
    return built.verifiers;
  };
  verifiersOf(s.configSource.current);
  return {
    // Read on every use: the config source swaps in a re-read config (lib/config/source.ts).
    get config() {
      return s.configSource.current;
    },
    get verifiers() {
      return verifiersOf(s.configSource.current);
    },
    configSource: s.configSource,
    events: new DynamoEventStore(s.db, s.env.tableName),
    cards: new DynamoCardCodeStore(s.db, s.env.tableName),
    notify: requireEnvValue(s.notify, ENV.notifyQueueUrl),
    logger: s.logger,
    metrics: s.metrics,
    close: async () => undefined,
  };
}
