import { randomUUID } from 'node:crypto';
import type { MessageRecord, RecordFields } from '#lib/model/index.js';

/** A unique id per call, so tests sharing one table never see each other's items. */
export const uniqueId = (prefix = 'msg'): string => `${prefix}_${randomUUID()}`;

/** A message record as ingest writes it (status queued, no attempts yet). */
export function messageRecord(overrides: Partial<RecordFields> & { app?: string } = {}): MessageRecord {
  const at = '2026-12-01T08:00:00.000Z';
  return {
    id: uniqueId(),
    app: 'ops',
    status: 'queued',
    priority: 'normal',
    attempts: 0,
    createdAt: at,
    updatedAt: at,
    apiKey: 'ci',
    request: {
      app: 'ops',
      priority: 'normal',
      recipients: { touser: ['alice'], toparty: [], totag: [] },
      msgtype: 'text',
      content: { content: 'disk full on db-1' },
      options: {},
    },
    generation: 0,
    expiresAt: 4_102_444_800, // 2100-01-01
    ...overrides,
  };
}
