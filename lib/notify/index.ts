export { notifyOnStatus } from './emit.js';
export { type NotifyDeps, type NotifyRecord, processNotifyBatch } from './service.js';
export { webhookTarget } from './targets.js';
