import { createNotifyDeps } from '#lib/runtime/notify.js';
import { wrapNotifyHandler } from './app.js';

// Built once per container: the guarded webhook client (its keep-alive sockets), stores and logger.
export const handler = wrapNotifyHandler(await createNotifyDeps());
