// Each function's grants (FUNCTION_ACCESS), re-exported by lib/resources/index.ts.
import type { FunctionId } from './functions.js';
import type { IndexName } from './table.js';

/** The WeCom API paths (under `/cgi-bin/`) a function may call. */
export type WecomCall =
  | 'gettoken'
  | 'message/send'
  | 'message/recall'
  | 'message/update_template_card'
  | 'agent/get'
  | 'webhook/send'
  | 'webhook/upload_media';

/**
 * What each function's code calls: AWS API actions per resource, and WeCom API paths. Infra grants exactly the
 * AWS actions (least privilege), and gives every function with a `wecom` entry the WeCom base URL
 * (`WECOM_API_BASE`) and, with fixed egress, a place behind the trusted IP (WeCom answers 60020 to any other
 * address). `test/integration/permissions.test.ts` checks that every DynamoDB operation and every WeCom path a
 * function is seen calling on the local stack is listed here, so a new call cannot ship without its grant or its
 * egress.
 */
export const FUNCTION_ACCESS = {
  ingest: {
    // PutItem: records, idempotency claims, token lock; BatchWriteItem: a batch POST's records; UpdateItem:
    // status, card response codes; DeleteItem: idempotency release and token lock release/invalidation (recall);
    // GetItem: idempotency replay, token, app and robot pauses and quota counters (GET /v1/apps, GET /v1/robots);
    // Query: a record with its
    // first delivery (status), a message's events and webhook attempts; BatchGetItem: the current state of a
    // listed page's messages (GET /v1/messages: first deliveries, and the records a `touser` page found).
    table: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'BatchGetItem'],
    // Query: the events feed (`GET /v1/events`) and the message list by app or by recipient (`GET /v1/messages`).
    indexes: ['byFeed', 'byApp', 'byRecipient'],
    // SendMessage: accepted messages, and the copies a redrive (`POST /v1/dlq/{id}/redrive`) queues;
    // GetQueueAttributes: the lanes' depths for admin keys (`GET /v1/apps`).
    lanes: ['SendMessage', 'GetQueueAttributes'],
    // The DLQ over HTTP (`/v1/dlq`, lib/ops/dlq.ts): receive to read (hidden while it looks), change visibility to
    // show them again at once, delete the copy of a message redriven or already handled.
    laneDlqs: ['ReceiveMessage', 'ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes'],
    // Recall and card updates answer with WeCom's verdict, so they call WeCom while the client waits; agent/get
    // for GET /v1/apps/{app}/reach, which WeCom answers only from the trusted IP; gettoken when no other function
    // has cached the app's token.
    wecom: ['gettoken', 'message/recall', 'message/update_template_card', 'agent/get'],
    // A recall's `message.recalled` webhook.
    notify: ['SendMessage'],
    notifyDlq: [],
    // Release timers of messages scheduled beyond 15 minutes: set at acceptance, removed by a cancel.
    timers: ['CreateSchedule', 'DeleteSchedule'],
  },
  sender: {
    // BatchWriteItem: first deliveries' outcomes, one request per batch; Query: a redelivered message's record with
    // its first delivery; GetItem/PutItem/DeleteItem also keep robots' media ids.
    table: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'],
    indexes: [],
    // SendMessage: deferred copies; ChangeMessageVisibility: retry backoff. Receive/delete: the event source.
    lanes: ['SendMessage', 'ChangeMessageVisibility'],
    laneDlqs: [],
    // A group robot's message (webhook/send) and its file or voice (webhook/upload_media): the same host as the
    // apps' calls, reached through the same egress (a robot's key needs no trusted IP, but it costs nothing there).
    wecom: ['gettoken', 'message/send', 'webhook/send', 'webhook/upload_media'],
    // Status webhooks (sent, failed, dead).
    notify: ['SendMessage'],
    notifyDlq: [],
    timers: [],
  },
  callback: {
    // PutItem: the event (its own dedupe claim) and a tied event's copy in the message's partition; GetItem: a
    // retried callback's first copy; UpdateItem: its `notified` mark and the message's newest card response_code.
    table: ['GetItem', 'PutItem', 'UpdateItem'],
    // The card index: a card event's task_id → its message.
    indexes: ['byTask'],
    lanes: [],
    laneDlqs: [],
    // Only the ingest function updates cards; a callback never waits on WeCom.
    wecom: [],
    // wecom.event webhooks for events tied to a message.
    notify: ['SendMessage'],
    notifyDlq: [],
    timers: [],
  },
  notify: {
    // Query: the message (its record and first delivery share a partition); PutItem: an attempt; UpdateItem: the
    // message's webhook status.
    table: ['Query', 'PutItem', 'UpdateItem'],
    indexes: [],
    lanes: [],
    laneDlqs: [],
    wecom: [],
    // ChangeMessageVisibility: the retry backoff. Receive/delete: the event source.
    notify: ['ChangeMessageVisibility'],
    // Jobs whose retries ran out.
    notifyDlq: ['SendMessage'],
    timers: [],
  },
} as const satisfies Record<
  FunctionId,
  {
    table: readonly string[];
    /** Indexes it may Query. */
    indexes: readonly IndexName[];
    lanes: readonly ('SendMessage' | 'ChangeMessageVisibility' | 'GetQueueAttributes')[];
    /** On both lanes' dead-letter queues (the Lambda event sources never read those). */
    laneDlqs: readonly (
      | 'ReceiveMessage'
      | 'ChangeMessageVisibility'
      | 'DeleteMessage'
      | 'GetQueueAttributes'
    )[];
    wecom: readonly WecomCall[];
    notify: readonly ('SendMessage' | 'ChangeMessageVisibility')[];
    notifyDlq: readonly 'SendMessage'[];
    /** EventBridge Scheduler actions on the stage's release timers. */
    timers: readonly ('CreateSchedule' | 'DeleteSchedule')[];
  }
>;

export type TableAction = (typeof FUNCTION_ACCESS)[keyof typeof FUNCTION_ACCESS]['table'][number];
export type LaneAction = (typeof FUNCTION_ACCESS)[keyof typeof FUNCTION_ACCESS]['lanes'][number];
export type LaneDlqAction = (typeof FUNCTION_ACCESS)[keyof typeof FUNCTION_ACCESS]['laneDlqs'][number];
export type NotifyQueueAction =
  | (typeof FUNCTION_ACCESS)[keyof typeof FUNCTION_ACCESS]['notify'][number]
  | (typeof FUNCTION_ACCESS)[keyof typeof FUNCTION_ACCESS]['notifyDlq'][number];

/** Whether the function calls WeCom at all: then its calls must leave from the trusted IP when there is one. */
export const callsWecom = (id: FunctionId): boolean => FUNCTION_ACCESS[id].wecom.length > 0;
