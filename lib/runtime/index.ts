// Each function imports its own runtime module ('./ingest.js', './sender.js', …) so that its bundle holds only what it
// uses; this index is for the local stack and tests, which run them all.
export { createCallbackDeps } from './callback.js';
export { createIngestDeps } from './ingest.js';
export { createNotifyDeps } from './notify.js';
export { createSenderDeps } from './sender.js';
export type { Closable, RuntimeOptions } from './shared.js';
