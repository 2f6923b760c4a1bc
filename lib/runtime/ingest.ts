import type { IngestDeps } from '#lib/ingest/index.js';
import { createUrlGuard } from '#lib/net/index.js';
import { DynamoIdempotencyStore } from '#lib/store/index.js';
import { createFetchWecomClient } from '#lib/wecom/index.js';
import { buildCommonDeps, type Closable, type RuntimeOptions } from './shared.js';

/**
 * Everything the ingest function needs, built once per container (clients, config, logger).
 *
 * @example const deps = await createIngestDeps(); // at module scope of the handler
 */
export async function createIngestDeps(opts: RuntimeOptions = {}): Promise<IngestDeps & Closable> {
  // Ingest only recalls now and then: Node's fetch keeps undici out of its bundle.
  const s = await buildCommonDeps('ingest', opts, (env) =>
    createFetchWecomClient({ baseUrl: env.wecomApiBase }),
  );
  return {
    config: s.config,
    messages: s.messages,
    idempotency: new DynamoIdempotencyStore(s.db, s.env.tableName),
    queue: s.queue,
    logger: s.logger,
    metrics: s.metrics,
    tokens: s.tokens,
    wecom: s.wecom,
    // callback_url targets: https, and never private, loopback or link-local addresses (SSRF).
    urlGuard: createUrlGuard({ allowLoopback: s.config.allowLoopbackWebhooks }),
    close: () => s.wecom.close(),
  };
}
