import type { SuppressedDuplicate } from './duplicates.js';
import type { SimReadings, SimReadingsInput } from './readings.js';
import type { Timeline } from './timeline.js';

/** One WeCom self-built application (自建应用): its secret only works with its own corpId. */
export interface SimApp {
  corpId: string;
  secret: string;
  agentId: number;
}

export interface SimLimits {
  /** WeCom: "每个机器人发送的消息不能超过20条/分钟"; the 21st in a minute answers 45009. */
  perRobotPerMinute: number;
  /** WeCom: per corp per API 10,000/min. Modelled per app and per API (send, recall). */
  perAppPerMinute: number;
  /** WeCom: per corp per API 150,000/h. */
  perAppPerHour: number;
  /** WeCom: one app may reach one member 30 times a minute; the excess is dropped silently. */
  perMemberPerMinute: number;
  /** WeCom: one app may reach one member 1,000 times an hour; the excess is dropped silently. */
  perMemberPerHour: number;
}

export interface SimWindows {
  minuteMs: number;
  hourMs: number;
  dayMs: number;
}

/**
 * Who is in the simulated corp. Ids are strings (WeCom's party and tag ids are integers; numbers are accepted over
 * HTTP). Userids are case-insensitive, as in WeCom. Everything is optional: without `users` any userid is valid;
 * without `parties`/`tags` any party/tag id is valid (reaching the members the maps give it, or nobody).
 */
export interface SimDirectory {
  users?: string[];
  parties?: string[];
  tags?: string[];
  /** Members without a base-API licence (基础接口许可): reported in `unlicenseduser`, never delivered. */
  unlicensedUsers?: string[];
  /** Members of each party; without it a party reaches nobody in the inboxes. */
  partyMembers?: Record<string, string[]>;
  /** Parent of each party. A party without one hangs under the root party `1` (WeCom's root department). */
  partyParents?: Record<string, string>;
  /** Members of each tag; without it a tag reaches nobody in the inboxes. */
  tagMembers?: Record<string, string[]>;
  /** Parties a tag holds (tag/get `partylist`): a tag send reaches their members too. */
  tagParties?: Record<string, string[]>;
  /** Per agentid: the app's visible range (可见范围) and contacts permission. Without an entry, the whole corp. */
  apps?: Record<string, SimAppRange>;
}

/**
 * An app's visible range (应用可见范围, what agent/get reports): sends reach only members in it (others are
 * `invaliduser`, parties outside it `invalidparty`), `@all` means everyone in it, and contacts reads outside it
 * answer 60011. A party in the range includes the parties below it, as in WeCom's admin console.
 */
export interface SimAppRange {
  users?: string[];
  parties?: string[];
  tags?: string[];
  /** false: the app may not read contacts; user/simplelist, department/simplelist and tag/get answer 48002. */
  readContacts?: boolean;
}

/**
 * What a group chat did to a robot: `active`; `removed` from the group (WeCom answers 93000, as for an unknown key);
 * `disabled` (93004); `not_in_group` (93008).
 */
export type SimRobotState = 'active' | 'removed' | 'disabled' | 'not_in_group';

/** A group robot (消息推送): its key is its only credential. */
export interface SimRobot {
  key: string;
  /** How the inspection API and the inbox page name its group (never by its key). Default from the key's hash. */
  name?: string;
  state?: SimRobotState;
}

/** A message a robot posted to its group. */
export interface GroupMessage {
  /** The simulator's own id (WeCom answers a robot's send without one). */
  msgid: string;
  msgtype: string;
  /** The message object; a file or voice with the name and size its upload_media was given. */
  payload: unknown;
  receivedAt: number;
}

/** A robot's group, as `GET /__sim/groups` lists it. */
export interface SimGroup {
  robot: string;
  state: SimRobotState;
  messages: number;
  /** Sends WeCom refused with 45009 (over the robot's minute). */
  refused: number;
  lastAt: number | null;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  apps: SimApp[];
  /** Group robots, by key. Settable at runtime (`POST /__sim/robots`). */
  robots?: SimRobot[];
  /** Added before answering each API call (not the `/__sim/` inspection API). */
  latencyMs?: number;
  tokenTtlSeconds?: number;
  /** Licensed members; WeCom allows seats × 200 person-times per app per day. */
  seats?: number;
  limits?: Partial<SimLimits>;
  windows?: Partial<SimWindows>;
  /** When given, unknown ids are reported invalid like WeCom does. Settable at runtime (`POST /__sim/directory`). */
  directory?: SimDirectory;
  /**
   * Which reading of each ambiguous WeCom rule to play (readings.ts): a preset name (`'lenient'`, `'strict'`) or
   * fields on top of `preset` / `DEFAULT_READINGS`. Settable at runtime (`POST /__sim/readings`).
   */
  readings?: SimReadingsInput;
  /** WeCom's clock; `POST /__sim/clock` adds an offset to it at runtime. Default `Date.now`. */
  clock?: () => number;
  /** Source of randomness for `faults.setRate`; tests inject a deterministic one. */
  random?: () => number;
  /** Most recent messages kept per member inbox (older ones are forgotten). Default 10,000. */
  inboxLimit?: number;
}

/**
 * - `{ errcode }`: answered instead of calling the API (42001 also revokes the token used).
 * - `http500`: an HTML error page with HTTP 500; nothing happens.
 * - `timeout`: no answer until the client gives up (held up to 60 s, then the connection is dropped); nothing
 *   happens.
 * - `reset`: the connection is dropped at once; nothing happens.
 * - `timeoutAfterDelivery` / `resetAfterDelivery`: the call takes effect (a send reaches the inboxes and the
 *   counters) but its answer never arrives — held like `timeout`, or dropped at once like `reset`.
 */
export type FaultKind =
  | { errcode: number }
  | 'http500'
  | 'timeout'
  | 'timeoutAfterDelivery'
  | 'reset'
  | 'resetAfterDelivery';
/** `robotSend`, `robotUpload`: a robot's webhook/send and webhook/upload_media. */
/** `contacts`: the contacts reads (agent/get, department/simplelist, user/simplelist, tag/get, user/list_id). */
export type FaultPath =
  | 'send'
  | 'gettoken'
  | 'recall'
  | 'contacts'
  | 'updateCard'
  | 'robotSend'
  | 'robotUpload';

export interface FaultControl {
  /** Random faults of that kind at that rate (0..1) on the path (default 'send'); rate 0 removes it. */
  setRate(kind: FaultKind, rate: number, opts?: { path?: FaultPath }): void;
  /**
   * The next calls to the path get these outcomes in order (the list `times` times over, default once), then
   * normal behaviour resumes; e.g. `script(['resetAfterDelivery'], { times: 5 })` for the next 5 sends.
   */
  script(kinds: (FaultKind | 'ok')[], opts?: { path?: FaultPath; times?: number }): void;
  clear(): void;
}

export interface SimStats {
  gettokenCalls: number;
  sendCalls: number;
  recallCalls: number;
  /** Calls of the contacts reads (agent/get, department/simplelist, user/simplelist, tag/get, user/list_id). */
  contactsCalls: number;
  /** Calls of message/update_template_card. */
  cardUpdateCalls: number;
  /** Calls of a robot's webhook/send and webhook/upload_media, and the messages that reached a group. */
  robotSendCalls: number;
  robotUploadCalls: number;
  robotDelivered: number;
  /** Person-times that reached an inbox. */
  delivered: number;
  /** Silent per-member drops (WeCom answered errcode 0 but the member never saw the message). */
  dropped: number;
  /** Answers with errcode 45009, whatever caused them. */
  rateLimited: number;
  duplicatesSuppressed: number;
  byErrcode: Record<string, number>;
  /** API calls per client IP (loopback addresses in tests). */
  callsByIp: Record<string, number>;
  /** The readings being played (readings.ts). */
  readings: SimReadings;
  /** Added to the simulator's clock (`POST /__sim/clock`). */
  clockOffsetMs: number;
  /** 45009 blocks in force: `corpId/agentId|api` → when the block ends (simulator clock, ms). */
  blocks: Record<string, number>;
  /** Wrong-secret gettoken calls per IP in the last hour, and banned IPs → when their ban ends. */
  ipBans: { wrongSecretsByIp: Record<string, number>; bannedUntil: Record<string, number> };
}

export interface ReceivedMessage {
  msgid: string;
  agentId: number;
  msgtype: string;
  /** The message object, e.g. `{ content: '...' }` for text. */
  payload: unknown;
  receivedAt: number;
  recalled: boolean;
  /** Template cards: what `update_template_card` changed, in order (a button's new text, or a whole new card). */
  updates?: ({ at: number; replaceName: string } | { at: number; card: unknown })[];
}

export type DropReason = 'member_minute' | 'member_hour';

export interface DroppedMessage {
  msgid: string;
  agentId: number;
  userId: string;
  reason: DropReason;
  at: number;
}

/**
 * A named member a send did not reach although WeCom accepted it for others, as the send answer reported them:
 * `invaliduser` (unknown, or outside the app's visible range) or `unlicenseduser`. Shown in the member's inbox,
 * since the member's own client shows nothing. No msgid when the whole send failed (81013).
 */
export interface UndeliveredMessage {
  msgid?: string;
  agentId: number;
  msgtype: string;
  userId: string;
  reason: 'invaliduser' | 'unlicenseduser';
  at: number;
}

/** A member the inbox page lists: everyone in the directory, and anyone who received something. */
export interface SimMember {
  userid: string;
  inDirectory: boolean;
  messages: number;
  /** When the newest message arrived (simulator clock, ms); null without any. */
  lastAt: number | null;
}

export interface LoggedRequest {
  at: number;
  /** Path without query string, so access tokens and secrets never reach the log. */
  path: string;
  /** null when there was no JSON answer (5xx fault, reset, timeout). */
  errcode: number | null;
  /** 0 when the socket closed without an answer. */
  httpStatus: number;
  durationMs: number;
  /** The caller's `user-agent` (the gateway's functions send `wecom-gateway/<function>`). */
  userAgent?: string;
}

export interface SendCallbackArgs {
  url: string;
  token: string;
  encodingAESKey: string;
  corpId: string;
  /** The plaintext event XML, e.g. `<xml><ToUserName>...</ToUserName>...<AgentID>1000002</AgentID></xml>`. */
  xml: string;
  timestamp?: number;
  nonce?: string;
  /** Outer `<AgentID>`; defaults to the `<AgentID>` found in `xml`. */
  agentId?: number;
}

/** Where WeCom posts an app's callbacks, and the app's callback settings (应用管理 › 接收消息 › API接收). */
export interface CallbackTarget {
  corpId: string;
  agentId: number;
  token: string;
  encodingAESKey: string;
  url: string;
}

export interface WecomSimulator {
  /** e.g. `http://127.0.0.1:54321`, no trailing slash: the value for WECOM_API_BASE. */
  readonly url: string;
  /** The inbox page: `<url>/__sim/ui` (deep links `/__sim/ui/<userid>` and `/__sim/ui/<userid>/latest`). */
  readonly inboxUrl: string;
  /** Builds the inbox page now rather than on its first request. */
  warmInbox(): Promise<void>;
  stop(): Promise<void>;
  /** Forgets everything WeCom remembers, clears faults and the request log; readings, directory, clock stay. */
  reset(): void;
  setLatency(ms: number): void;
  readonly faults: FaultControl;
  stats(): SimStats;
  inbox(userId: string): ReceivedMessage[];
  /** Every robot's group (`GET /__sim/groups`). */
  groups(): SimGroup[];
  /** A robot's group inbox by the robot's name, oldest first (`GET /__sim/groups/<name>`); [] for an unknown one. */
  groupInbox(robot: string): GroupMessage[];
  /** Adds robots, or changes a robot's state (`POST /__sim/robots`). */
  setRobots(robots: SimRobot[]): void;
  /** The directory's users, then anyone else who received something (`GET /__sim/members`). */
  members(): SimMember[];
  /** A member's messages, drops, suppressed duplicates and undelivered sends, newest first (`GET /__sim/timeline/<userid>`). */
  timeline(userId: string): Timeline;
  drops(): DroppedMessage[];
  /** Sends the duplicate check suppressed, and what they were answered. */
  duplicates(): SuppressedDuplicate[];
  requests(): LoggedRequest[];
  invalidateTokens(): void;
  readings(): SimReadings;
  /** A preset name or fields to change; answers the readings now in force. */
  setReadings(input: SimReadingsInput): SimReadings;
  directory(): SimDirectory;
  setDirectory(directory: SimDirectory): void;
  /** Moves WeCom's clock: `clock() + ms` from now on (e.g. to reach the end of WeCom's day in a test). */
  setClockOffset(ms: number): void;
  sendCallback(args: SendCallbackArgs): Promise<{ status: number; body: string; attempts: number }>;
  /** Where each app's callbacks go (the local stack sets its callback URLs once its API listens). */
  setCallbackTargets(targets: CallbackTarget[]): void;
  /**
   * A member presses a button (or an action_menu entry) of a card they received: WeCom's card event, with a fresh
   * response_code, posted to the app's callback URL (`POST /__sim/click`).
   */
  click(
    req: ClickRequest,
  ): Promise<{ status: number; attempts: number; responseCode: string; eventKey: string; taskId: string }>;
  /** A member sends a text to the app (`POST /__sim/reply`). */
  reply(req: {
    userId: string;
    content: string;
    agentId?: number;
    corpId?: string;
  }): Promise<{ status: number; attempts: number; msgId: string }>;
}

/** What `/__sim/click` asked for. */
export interface ClickRequest {
  userId: string;
  taskId?: string;
  msgid?: string;
  /** The button, submit or action_menu key; default the card's first callback key. */
  key?: string;
  /** `template_card_menu_event` (the card's top-right menu) instead of `template_card_event`. */
  menu?: boolean;
  /** Vote/multiple choice answers: question_key → option ids. */
  selected?: Record<string, string[]>;
}
