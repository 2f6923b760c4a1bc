import { createSenderDeps } from '#lib/runtime/sender.js';
import { wrapSenderHandler } from './app.js';

// Built once per container, during Lambda's init phase: the undici pool, token cache and quota blocks live
// across warm invocations.
export const handler = wrapSenderHandler(await createSenderDeps());
