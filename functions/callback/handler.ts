import { createCallbackDeps } from '#lib/runtime/callback.js';
import { wrapCallbackHandler } from './app.js';

// Built once per container: config, one callback verifier per app, clients and logger.
export const handler = wrapCallbackHandler(await createCallbackDeps());
