import type { ApiKeyConfig } from '#lib/config/index.js';
import {
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  RECEIPT_LISTS,
  type WecomReceipt,
} from '#lib/model/index.js';
import { recentEvents } from '#lib/store/index.js';
import { readOwn } from './access.js';
import type { IngestDeps } from './types.js';

/** GET /v1/messages/{id} (SPEC §2). */
export interface MessageStatusView {
  id: string;
  app: string;
  status: MessageStatus;
  priority: MessageRecord['priority'];
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  metadata: Record<string, string>;
  wecom: ({ msgid: string } & Record<(typeof RECEIPT_LISTS)[number], string>) | null;
  error: MessageError | null;
  events: MessageEvent[];
  /** Events of a long run of retries or deferrals that were counted instead of listed (the newest is listed). */
  events_omitted: number;
}

/** GET /v1/messages/{id}: 404 (not 403) for ids of apps the key may not read, so ids do not leak. */
export async function getMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<MessageStatusView> {
  return toStatusView(await readOwn(deps, apiKey, id));
}

function toStatusView(r: MessageRecord): MessageStatusView {
  return {
    id: r.id,
    app: r.app,
    status: r.status,
    priority: r.priority,
    attempts: r.attempts,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    sent_at: r.sentAt ?? null,
    metadata: r.metadata ?? {},
    wecom: r.wecom ? receiptView(r.wecom) : null,
    error: r.error ?? null,
    events: recentEvents(r),
    events_omitted: r.eventsOmitted ?? 0,
  };
}

/** WeCom's own shape: every list present, as an `a|b` string, empty when none. */
function receiptView(receipt: WecomReceipt): NonNullable<MessageStatusView['wecom']> {
  const view = { msgid: receipt.msgid } as NonNullable<MessageStatusView['wecom']>;
  for (const list of RECEIPT_LISTS) view[list] = receipt[list] ?? '';
  return view;
}
