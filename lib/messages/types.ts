import type { LaneName } from '#lib/resources/index.js';
import type { CARD_TYPE_NAMES, MSG_TYPE_NAMES, ROBOT_MSG_TYPE_NAMES } from './limits.js';

/** A message's priority is the lane it is queued in (lib/resources `LANES`). */
export type Priority = LaneName;
export type MsgType = (typeof MSG_TYPE_NAMES)[number];
/** What a group robot's `webhook/send` takes (path/91770). */
export type RobotMsgType = (typeof ROBOT_MSG_TYPE_NAMES)[number];
export type CardType = (typeof CARD_TYPE_NAMES)[number];

export interface Recipients {
  touser: string[];
  toparty: string[];
  totag: string[];
}

/** WeCom `message/send` flags, passed through unchanged once validated. */
export interface SendOptions {
  safe?: 0 | 1 | 2;
  enable_id_trans?: 0 | 1;
  enable_duplicate_check?: 0 | 1;
  duplicate_check_interval?: number;
}

/**
 * A validated, normalized `POST /v1/messages` body: addressed to an app (`message/send` to members) or to a group
 * robot (`webhook/send` to its group chat). `robot` tells them apart.
 */
export type MessageRequest = AppMessageRequest | RobotMessageRequest;

/** A message an app sends to members (`app`). */
export interface AppMessageRequest {
  app: string;
  robot?: undefined;
  priority: Priority;
  callbackUrl?: string;
  metadata?: Record<string, string>;
  /** Trimmed, de-duplicated, in first-seen order. `@all` only ever appears alone in `touser`. */
  recipients: Recipients;
  msgtype: MsgType;
  /** The msgtype object exactly as it will be sent to WeCom (e.g. the `text` object). */
  content: Record<string, unknown>;
  options: SendOptions;
  /** `ttl_seconds`: not delivered by then → `expired`. */
  ttlSeconds?: number;
  /** `send_at`, as an ISO time in UTC: not delivered before then (docs/scheduling.md). */
  sendAt?: string;
  /** `quiet_hours: false`: not held by the app's quiet hours. */
  quietHours?: false;
  /** `duplicate_protection: false`: the client opted out of WeCom's duplicate check (docs/concepts/delivery.md, "Duplicates"). */
  duplicateProtection?: false;
  /**
   * Set when long content was split (`split`): what each send carries, in order, each within WeCom's limit and
   * already converted by the markdown fallback. `msgtype` and `content` then keep the whole content as sent by the
   * client, for the record; only the segments go to WeCom.
   */
  segments?: AppSegment[];
}

/**
 * A message a group robot posts to its group chat (`robot`). No recipients: a robot reaches the group it was added
 * to, and mentions people inside its content (`text.mentioned_list`, `<@userid>` in markdown).
 */
export interface RobotMessageRequest {
  robot: string;
  app?: undefined;
  priority: Priority;
  callbackUrl?: string;
  metadata?: Record<string, string>;
  msgtype: RobotMsgType;
  /**
   * The msgtype object as the robot will send it, except for a file or voice given as bytes (`base64` and
   * `filename`): the sender uploads those through the robot's `upload_media` and sends the media id.
   */
  content: Record<string, unknown>;
  ttlSeconds?: number;
  /** As for an app: set when long content was split (`split`), each part within the robot's limit. */
  segments?: RobotSegment[];
}

/**
 * One of the ordered sends a split message becomes (the API calls them parts; the code says segment, because in the
 * quota engine a part is a subset of a message's recipients).
 */
export interface AppSegment {
  msgtype: Extract<MsgType, 'text' | 'markdown' | 'textcard'>;
  content: Record<string, unknown>;
}

/** A part of a robot's split content: text, markdown or markdown_v2. */
export interface RobotSegment {
  msgtype: Extract<RobotMsgType, 'text' | 'markdown' | 'markdown_v2'>;
  content: Record<string, unknown>;
}

export type Segment = AppSegment | RobotSegment;

/** One problem with the request: `field` is a path such as `news.articles[3].title` ('(body)' for the body itself). */
export interface ValidationIssue {
  field: string;
  message: string;
}

export type ValidationResult = { ok: true; value: MessageRequest } | { ok: false; issues: ValidationIssue[] };
