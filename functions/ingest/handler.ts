import { createIngestDeps } from '#lib/runtime/ingest.js';
import { wrapIngestHandler } from './app.js';

// Built once per container, during Lambda's init phase: config, clients and logger are reused by warm calls. The
// console's files and the OpenAPI document were embedded by the bundler (infra/constructs/esbuild-options.ts) and are
// unpacked on their first request.
export const handler = wrapIngestHandler(await createIngestDeps(), {
  console: async () => (await import('#lib/web/apps.js')).embeddedConsole(),
  openapi: async () => (await import('#lib/web/documents.js')).embeddedOpenApi(),
});
