import { createIngestDeps } from '#lib/runtime/ingest.js';
import { embeddedConsole } from '#lib/web/index.js';
import { wrapIngestHandler } from './app.js';

// Built once per container, during Lambda's init phase: config, clients and logger are reused by warm calls. The
// console's files were embedded by the bundler (infra/constructs/bundling.ts) and are parsed on its first request.
export const handler = wrapIngestHandler(await createIngestDeps(), {
  get console() {
    return embeddedConsole();
  },
});
