// Each function imports its own runtime module ('./ingest.js' or './sender.js') so that its bundle holds only what it
// uses; this index is for the local stack and tests, which run both.
export { createIngestDeps } from './ingest.js';
export { createSenderDeps } from './sender.js';
export type { Closable, RuntimeOptions } from './shared.js';
