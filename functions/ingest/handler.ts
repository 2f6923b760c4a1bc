import { createIngestDeps } from '#lib/runtime/ingest.js';
import { wrapIngestHandler } from './app.js';

// Built once per container, during Lambda's init phase: config, clients and logger are reused by warm calls.
export const handler = wrapIngestHandler(await createIngestDeps());
