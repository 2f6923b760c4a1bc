/** One WeCom self-built application (自建应用): its secret only works with its own corpId. */
export interface SimApp {
  corpId: string;
  secret: string;
  agentId: number;
}

export interface SimLimits {
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

export interface SimDirectory {
  users?: string[];
  parties?: string[];
  tags?: string[];
  /** Members without a base-API licence (基础接口许可): reported in `unlicenseduser`, never delivered. */
  unlicensedUsers?: string[];
  /** Optional expansion of a party id to member ids; without it a party reaches nobody in the inboxes. */
  partyMembers?: Record<string, string[]>;
  /** Optional expansion of a tag id to member ids; without it a tag reaches nobody in the inboxes. */
  tagMembers?: Record<string, string[]>;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  apps: SimApp[];
  /** Added before answering each API call (not the `/__sim/` inspection API). */
  latencyMs?: number;
  tokenTtlSeconds?: number;
  /** Licensed members; WeCom allows seats × 200 person-times per app per day. */
  seats?: number;
  limits?: Partial<SimLimits>;
  windows?: Partial<SimWindows>;
  /** When given, unknown ids are reported invalid like WeCom does. */
  directory?: SimDirectory;
  clock?: () => number;
  /** Source of randomness for `faults.setRate`; tests inject a deterministic one. */
  random?: () => number;
  /** Most recent messages kept per member inbox (older ones are forgotten). Default 10,000. */
  inboxLimit?: number;
}

export type FaultKind = { errcode: number } | 'http500' | 'timeout' | 'timeoutAfterDelivery' | 'reset';
export type FaultPath = 'send' | 'gettoken' | 'recall';

export interface FaultControl {
  /** Random faults of that kind at that rate (0..1) on the path (default 'send'); rate 0 removes it. */
  setRate(kind: FaultKind, rate: number, opts?: { path?: FaultPath }): void;
  /** The next calls to the path get these outcomes in order, then normal behaviour resumes. */
  script(kinds: (FaultKind | 'ok')[], opts?: { path?: FaultPath }): void;
  clear(): void;
}

export interface SimStats {
  gettokenCalls: number;
  sendCalls: number;
  recallCalls: number;
  /** Person-times that reached an inbox. */
  delivered: number;
  /** Silent per-member drops (WeCom answered errcode 0 but the member never saw the message). */
  dropped: number;
  /** Answers with errcode 45009, whatever caused them. */
  rateLimited: number;
  duplicatesSuppressed: number;
  byErrcode: Record<string, number>;
}

export interface ReceivedMessage {
  msgid: string;
  agentId: number;
  msgtype: string;
  /** The message object, e.g. `{ content: '...' }` for text. */
  payload: unknown;
  receivedAt: number;
  recalled: boolean;
}

export type DropReason = 'member_minute' | 'member_hour';

export interface DroppedMessage {
  msgid: string;
  agentId: number;
  userId: string;
  reason: DropReason;
  at: number;
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

export interface WecomSimulator {
  /** e.g. `http://127.0.0.1:54321`, no trailing slash: the value for WECOM_API_BASE. */
  readonly url: string;
  stop(): Promise<void>;
  reset(): void;
  setLatency(ms: number): void;
  readonly faults: FaultControl;
  stats(): SimStats;
  inbox(userId: string): ReceivedMessage[];
  drops(): DroppedMessage[];
  requests(): LoggedRequest[];
  invalidateTokens(): void;
  sendCallback(args: SendCallbackArgs): Promise<{ status: number; body: string }>;
}
