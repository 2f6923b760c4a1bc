/**
 * WeCom callback events after decryption, normalised. Field names follow WeCom's XML in camelCase; every value
 * stays the string WeCom sent (MsgId is a 64-bit integer, beyond a JS number's 53 bits), except `createTime`,
 * Unix seconds. Sources: 接收消息 path/90239 (messages), 事件格式 path/90240 (events, incl. 模板卡片事件推送).
 */

/** What a parsed XML element holds: text, repeated elements, or child elements. */
export type XmlValue = string | XmlValue[] | { [name: string]: XmlValue };
/** The children of `<xml>` exactly as received. */
export type XmlFields = { [name: string]: XmlValue };

interface Common {
  /** ToUserName: the corp. */
  corpId: string;
  /** FromUserName: the member's userid (`sys` for contact changes). */
  from: string;
  /** CreateTime, Unix seconds. */
  createTime: number;
  /** AgentID, when WeCom sends it. */
  agentId?: string;
}

/** A message a member sent to the app (接收消息). `msgId` is WeCom's 64-bit MsgId as a decimal string. */
export type UserMessage = Common & { msgId: string } & (
    | { kind: 'text'; content: string }
    | { kind: 'image'; picUrl: string; mediaId: string }
    | { kind: 'voice'; mediaId: string; format: string }
    | { kind: 'video'; mediaId: string; thumbMediaId: string }
    /** Location_X is the latitude, Location_Y the longitude (path/90239). */
    | { kind: 'location'; latitude: string; longitude: string; scale: string; label: string }
    | { kind: 'link'; title: string; description: string; url: string; picUrl: string }
  );

/** One answered question of a vote or multiple-choice card (SelectedItems › SelectedItem). */
export interface SelectedItem {
  questionKey: string;
  optionIds: string[];
}

/** Card interaction: `taskId` is the card's task_id (the gateway's key back to the message). */
interface CardInteraction {
  /** The key of the pressed button, submit button or action_menu entry. */
  eventKey: string;
  taskId: string;
  cardType: string;
  /** Single-use code for update_template_card, valid 72 h (path/94945). '' when absent. */
  responseCode: string;
}

export type AppEvent = Common &
  (
    | { kind: 'enter_agent'; eventKey: string }
    | { kind: 'menu_click'; eventKey: string }
    /** `eventKey` is the URL the menu opened. */
    | { kind: 'menu_view'; eventKey: string }
    | ({ kind: 'template_card_event'; selectedItems: SelectedItem[] } & CardInteraction)
    | ({ kind: 'template_card_menu_event' } & CardInteraction)
    /** 通讯录变更 (create_user, update_user, delete_user, create_party, …, update_tag): kept as received. */
    | { kind: 'change_contact'; changeType: string; fields: XmlFields }
  );

/** Anything else WeCom sends (other events, future message types): kept as received, never rejected. */
export type UnknownEvent = Common & { kind: 'unknown'; msgType: string; event?: string; fields: XmlFields };

export type CallbackEvent = UserMessage | AppEvent | UnknownEvent;
export type CallbackEventKind = CallbackEvent['kind'];

/** Kinds whose `msgId` is WeCom's message id. */
export const MESSAGE_KINDS: ReadonlySet<CallbackEventKind> = new Set([
  'text',
  'image',
  'voice',
  'video',
  'location',
  'link',
]);

export const isUserMessage = (event: CallbackEvent): event is UserMessage => MESSAGE_KINDS.has(event.kind);
