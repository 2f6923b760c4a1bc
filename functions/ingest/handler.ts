import { createIngestDeps } from '#lib/runtime/ingest.js';
import { embeddedConsole, embeddedOpenApi } from '#lib/web/index.js';
import { wrapIngestHandler } from './app.js';

// Built once per container, during Lambda's init phase: config, clients and logger are reused by warm calls. The
// console's files and the OpenAPI document were embedded by the bundler (infra/constructs/bundling.ts) and are
// unpacked on their first request.
export const handler = wrapIngestHandler(await createIngestDeps(), {
  get console() {
    return embeddedConsole();
  },
  get openapi() {
    return embeddedOpenApi();
  },
});
