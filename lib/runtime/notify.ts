import { type ConfigSource, readFunctionEnv, requireEnvValue } from '#lib/config/index.js';
import type { NotifyDeps } from '#lib/notify/index.js';
import { ENV } from '#lib/resources/index.js';
import { DynamoMessageStore, DynamoWebhookLog } from '#lib/store/index.js';
import { createWebhookClient, type WebhookClient } from '#lib/webhooks/index.js';
import { buildBase, type Closable, type RuntimeOptions } from './shared.js';

/**
 * Everything the notify function needs, built once per container: the SSRF-guarded webhook client (loopback only
 * when the config allows it, i.e. the local stack), the stores and the notify queue with its DLQ.
 */
export async function createNotifyDeps(
  opts: RuntimeOptions = {},
): Promise<NotifyDeps & Closable & { configSource: ConfigSource }> {
  const s = await buildBase('notify', opts, () => readFunctionEnv());
  requireEnvValue(s.env.notifyDlqUrl, ENV.notifyDlqUrl);
  // One client per value of allowLoopbackWebhooks, so a re-read config's setting holds (and sockets are kept).
  const clients = new Map<boolean, WebhookClient>();
  const clientFor = (allowLoopback: boolean): WebhookClient => {
    let client = clients.get(allowLoopback);
    if (!client) {
      client = createWebhookClient({
        allowLoopback,
        ...(opts.webhookResolve ? { resolve: opts.webhookResolve } : {}),
        ...(opts.webhookCa ? { tls: { ca: opts.webhookCa } } : {}),
      });
      clients.set(allowLoopback, client);
    }
    return client;
  };
  return {
    // Read on every use: the config source swaps in a re-read config (lib/config/source.ts).
    get config() {
      return s.configSource.current;
    },
    get client() {
      return clientFor(s.configSource.current.allowLoopbackWebhooks);
    },
    configSource: s.configSource,
    // No status listener: notify writes webhook state, never a status.
    messages: new DynamoMessageStore(s.db, s.env.tableName),
    webhooks: new DynamoWebhookLog(s.db, s.env.tableName),
    queue: requireEnvValue(s.notify, ENV.notifyQueueUrl),
    logger: s.logger,
    metrics: s.metrics,
    ...(opts.webhookRetry ? { retry: opts.webhookRetry } : {}),
    close: async () => {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
