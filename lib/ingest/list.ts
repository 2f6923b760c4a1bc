import type { ApiKeyConfig } from '#lib/config/index.js';
import { type Addressed, addressOf, channelOf } from '#lib/messages/index.js';
import type { MessageStatus, MessageSummary } from '#lib/model/index.js';
import { authorizeChannel } from './access.js';
import { decodeListCursor, encodeListCursor } from './list-cursor.js';
import { parseListQuery } from './list-query.js';
import type { IngestDeps } from './types.js';

/** One entry of `GET /v1/messages`: a subset of `GET /v1/messages/{id}`, plus whom the message is for. */
/** A list entry: the message's channel (`app`, or `robot`) and its fields. */
export type MessageSummaryView = Addressed & SummaryViewFields;

export interface SummaryViewFields {
  id: string;
  status: MessageStatus;
  priority: MessageSummary['priority'];
  msgtype: MessageSummary['msgtype'];
  /** The first 20 of each kind, as the client wrote them. */
  touser: string[];
  toparty: string[];
  totag: string[];
  /** Recipients left out of the three lists. */
  recipients_omitted: number;
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** A scheduled message's `send_at` and `release_at`, as `GET /v1/messages/{id}` shows them. */
  send_at?: string;
  release_at?: string;
}

export interface MessageListView {
  messages: MessageSummaryView[];
  /** Pass as `cursor` (with the same filters) for the next page; null at the end of the list. */
  next_cursor: string | null;
}

export const toSummaryView = (s: MessageSummary): MessageSummaryView => ({
  id: s.id,
  ...addressOf(channelOf(s)),
  status: s.status,
  priority: s.priority,
  msgtype: s.msgtype,
  touser: s.recipients.touser,
  toparty: s.recipients.toparty,
  totag: s.recipients.totag,
  recipients_omitted: s.recipients.omitted,
  attempts: s.attempts,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
  sent_at: s.sentAt ?? null,
  ...(s.schedule ? { send_at: s.schedule.dueAt, release_at: s.schedule.releaseAt } : {}),
});

/**
 * GET /v1/messages?app=|robot=&status=&touser=&msgtype=&since=&until=&limit=&cursor=: an app's (or a group
 * robot's) messages, newest first, one page per call (one DynamoDB Query: lib/store `DynamoMessageList`). Bad
 * parameters are a 400 naming each; an app or robot the key may not read is a 403, the same for ones that do not
 * exist (lib/ingest `authorizeChannel`). A filtered
 * page may hold fewer than `limit` messages while `next_cursor` is not null: follow it to the end.
 *
 * @example await listMessages(deps, apiKey, { app: 'ops', status: 'failed', since: '2026-12-01T00:00:00Z' })
 */
export async function listMessages(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  query: Readonly<Record<string, string | undefined>>,
): Promise<MessageListView> {
  const { filters, limit, cursor } = parseListQuery(query, apiKey);
  authorizeChannel(apiKey, filters.channel);
  const after = cursor === undefined ? undefined : decodeListCursor(cursor, filters);
  const page = await deps.messageList.list({
    ...filters,
    limit,
    ...(after ? { after } : {}),
    now: (deps.now ?? Date.now)(),
  });
  return {
    messages: page.messages.map(toSummaryView),
    next_cursor: page.next ? encodeListCursor(page.next, filters) : null,
  };
}
