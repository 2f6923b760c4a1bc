import type { ApiKeyConfig } from '#lib/config/index.js';
import { InvalidCursorError, type StoredEvent } from '#lib/store/event-store.js';
import { publicEvent } from '#lib/webhooks/payloads.js';
import { authorizeApp } from './access.js';
import { InvalidRequestError } from './errors.js';
import type { IngestDeps } from './types.js';

/** A received WeCom event as the API shows it (the card's response_code is never shown). */
export interface EventView {
  id: string;
  app: string;
  received_at: string;
  message_id: string | null;
  event: Record<string, unknown>;
}

export const toEventView = (e: StoredEvent): EventView => ({
  id: e.id,
  app: e.app,
  received_at: e.receivedAt,
  message_id: e.messageId ?? null,
  event: publicEvent(e.event),
});

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;
const DEFAULT_WINDOW_MS = 24 * 3600_000;

/**
 * GET /v1/events?app=&since=&limit=&cursor=: an app's received WeCom events (user messages, menu clicks, card
 * presses, contact changes), oldest first, from `since` (ISO 8601, default 24 h ago) or from where `cursor` left
 * off. Keep the last `next_cursor` and pass it next time to read only what arrived since.
 *
 * @example await listEvents(deps, apiKey, { app: 'ops', since: '2026-12-01T00:00:00Z' })
 */
export async function listEvents(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  query: Record<string, string | undefined>,
): Promise<{ events: EventView[]; next_cursor: string | null }> {
  const { app, since, limit: limitText, cursor } = query;
  const issues: { field: string; message: string }[] = [];
  if (!app) issues.push({ field: 'app', message: 'required' });
  const now = (deps.now ?? Date.now)();
  const sinceMs = since === undefined ? now - DEFAULT_WINDOW_MS : Date.parse(since);
  if (Number.isNaN(sinceMs) || !/^\d{4}-\d{2}-\d{2}T/.test(since ?? '2000-01-01T')) {
    issues.push({ field: 'since', message: 'must be an ISO 8601 time, e.g. 2026-12-01T08:00:00Z' });
  }
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    issues.push({ field: 'limit', message: `must be an integer 1-${MAX_LIMIT}` });
  }
  if (issues.length > 0 || !app)
    throw new InvalidRequestError('invalid_request', 'bad query parameters', issues);
  authorizeApp(apiKey, app);
  // The feed keeps what the retention keeps: an older `since` reads from the oldest day that can hold events.
  const oldest = now - deps.config.retentionDays * 86_400_000;
  const from = new Date(Math.max(sinceMs, oldest)).toISOString();
  try {
    const page = await deps.events.listByApp(app, from, { limit, ...(cursor ? { cursor } : {}), now });
    return { events: page.events.map(toEventView), next_cursor: page.cursor ?? null };
  } catch (err) {
    if (err instanceof InvalidCursorError) {
      throw new InvalidRequestError('invalid_request', err.message, [
        { field: 'cursor', message: err.message },
      ]);
    }
    throw err;
  }
}
