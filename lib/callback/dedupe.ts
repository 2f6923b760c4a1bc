import { createHash } from 'node:crypto';
import { type CallbackEvent, isUserMessage, type XmlFields } from './events.js';

/**
 * The idempotency key of a callback: WeCom retries a callback it got no 200 for (three times, path/90238), and
 * the same event must be stored once. WeCom's own advice: "有msgid的消息推荐使用msgid排重。事件类型消息推荐使用
 * FromUserName + CreateTime排重". So:
 *
 * - a message (anything with a numeric MsgId): `msg:<MsgId>`;
 * - an event: `evt:<hash>` over FromUserName, CreateTime and the event name, plus what tells apart two events of
 *   the same member in the same second — the card's TaskId, EventKey and selections; a menu's EventKey; a
 *   contact change's ChangeType and subject (UserID, NewUserID, Id, TagId). ResponseCode is left out: WeCom does
 *   not say a retry carries the same one.
 *
 * The hash (SHA-256, base64url) keeps the key short whatever WeCom puts in an EventKey (up to 1024 bytes) —
 * DynamoDB sort keys end at 1024 bytes. Keys are unique per app: store them under the app.
 *
 * @example dedupeKey(event) // 'msg:4561255354251345929' or 'evt:3q2-7w…'
 */
export function dedupeKey(event: CallbackEvent): string {
  if (isUserMessage(event)) return `msg:${event.msgId}`;
  if (
    event.kind === 'unknown' &&
    typeof event.fields.MsgId === 'string' &&
    /^\d{1,20}$/.test(event.fields.MsgId)
  ) {
    return `msg:${event.fields.MsgId}`;
  }
  const parts: unknown[] = [event.from, event.createTime, ...discriminators(event)];
  return `evt:${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`;
}

function discriminators(event: CallbackEvent): unknown[] {
  switch (event.kind) {
    case 'enter_agent':
    case 'menu_click':
    case 'menu_view':
      return [event.kind, event.eventKey];
    case 'template_card_event':
      return [event.kind, event.taskId, event.eventKey, event.selectedItems];
    case 'template_card_menu_event':
      return [event.kind, event.taskId, event.eventKey];
    case 'change_contact':
      return [event.kind, event.changeType, ...strings(event.fields, ['UserID', 'NewUserID', 'Id', 'TagId'])];
    case 'unknown':
      return [
        event.msgType,
        event.event ?? '',
        ...strings(event.fields, ['EventKey', 'ChangeType', 'TaskId', 'UserID', 'Id', 'TagId']),
      ];
    default:
      return [];
  }
}

const strings = (fields: XmlFields, names: string[]): string[] =>
  names.map((name) => {
    const value = fields[name];
    return typeof value === 'string' ? value : '';
  });
