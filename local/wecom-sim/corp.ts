import { randomBytes } from 'node:crypto';
import { Cards, type Click } from './cards.js';
import { answerContacts, type ContactsApi } from './contacts.js';
import { ALL_MEMBERS_INBOX, Directory, type Resolution } from './directory.js';
import { DuplicateCheck, type SuppressedDuplicate } from './duplicates.js';
import { type ApiAnswer, apiAnswer as answer, ERRCODE } from './errcodes.js';
import { SimulatorConfigError } from './errors.js';
import { Inboxes } from './inboxes.js';
import { IpBans } from './ip-ban.js';
import { Limits } from './limits.js';
import { DEFAULT_READINGS, resolveReadings, type SimReadings } from './readings.js';
import type { FormPart } from './robot-validation.js';
import { DEFAULT_ROBOT_PER_MINUTE, Robots } from './robots.js';
import { Tokens } from './tokens.js';
import type {
  ClickRequest,
  DroppedMessage,
  FaultPath,
  GroupMessage,
  ReceivedMessage,
  SimApp,
  SimDirectory,
  SimGroup,
  SimLimits,
  SimMember,
  SimRobot,
  SimStats,
  SimulatorOptions,
  SimWindows,
  UndeliveredMessage,
} from './types.js';
import {
  duplicateCheckInterval,
  isRejection,
  missingTaskId,
  parseAgentId,
  parseRecipients,
  validateMessage,
  wantsResponseCode,
} from './validation.js';

export { ALL_MEMBERS_INBOX } from './directory.js';
export type { ApiAnswer } from './errcodes.js';

/** WeCom defaults (SPEC §5): corp per API 10,000/min and 150,000/h, member 30/min and 1,000/h. */
export const DEFAULT_LIMITS: SimLimits = {
  perRobotPerMinute: DEFAULT_ROBOT_PER_MINUTE,
  perAppPerMinute: 10_000,
  perAppPerHour: 150_000,
  perMemberPerMinute: 30,
  perMemberPerHour: 1000,
};
export const DEFAULT_WINDOWS: SimWindows = { minuteMs: 60_000, hourMs: 3_600_000, dayMs: 86_400_000 };
export const DEFAULT_TOKEN_TTL_SECONDS = 7200;
export const DEFAULT_SEATS = 1000;
/** WeCom: an app may send seats × 200 person-times (人次) per day. */
export const PERSON_TIMES_PER_SEAT_PER_DAY = 200;
/** WeCom: message/recall only works within 24 hours of sending (real hours, not the shrinkable day window). */
export const RECALL_WINDOW_MS = 24 * 3_600_000;
const SENT_RETENTION_MS = 2 * RECALL_WINDOW_MS;

export type ApiName = 'send' | 'recall' | 'updateCard' | ContactsApi;

interface AppState {
  app: SimApp;
  key: string;
}

interface SentRecord {
  app: AppState;
  at: number;
  entries: ReceivedMessage[];
}

type Auth = { app: AppState } | { answer: ApiAnswer };
type Counters = Omit<
  SimStats,
  | 'readings'
  | 'clockOffsetMs'
  | 'blocks'
  | 'ipBans'
  | 'robotSendCalls'
  | 'robotUploadCalls'
  | 'robotDelivered'
>;

function emptyCounters(): Counters {
  return {
    gettokenCalls: 0,
    sendCalls: 0,
    recallCalls: 0,
    contactsCalls: 0,
    cardUpdateCalls: 0,
    delivered: 0,
    dropped: 0,
    rateLimited: 0,
    duplicatesSuppressed: 0,
    byErrcode: {},
    callsByIp: {},
  };
}

/** WeCom's server-side state for one simulated corp: apps, tokens, limits, inboxes. No HTTP here. */
export class Corp {
  readonly #baseClock: () => number;
  #clockOffsetMs = 0;
  #readings: SimReadings;
  #directory: Directory;
  readonly #seats: number;
  readonly #appsByCorp = new Map<string, Map<string, AppState>>();
  readonly #tokens: Tokens<AppState>;
  readonly #limits: Limits;
  readonly #duplicates: DuplicateCheck;
  readonly #ipBans: IpBans;
  readonly #inboxes: Inboxes;
  readonly #cards = new Cards();
  readonly #robots: Robots;
  #counters = emptyCounters();
  #sent = new Map<string, SentRecord>();
  #msgSeq = 0;

  constructor(opts: SimulatorOptions) {
    if (opts.apps.length === 0) throw new SimulatorConfigError('at least one app is required');
    this.#baseClock = opts.clock ?? Date.now;
    this.#readings = resolveReadings(opts.readings, DEFAULT_READINGS);
    this.#directory = new Directory(opts.directory);
    this.#seats = opts.seats ?? DEFAULT_SEATS;
    const windows = { ...DEFAULT_WINDOWS, ...opts.windows };
    const limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const readings = () => this.#readings;
    this.#limits = new Limits(limits, windows, this.#seats * PERSON_TIMES_PER_SEAT_PER_DAY, readings);
    this.#duplicates = new DuplicateCheck(() => this.#readings.duplicateCheck);
    this.#ipBans = new IpBans(windows.hourMs);
    this.#inboxes = new Inboxes(opts.inboxLimit ?? 10_000);
    this.#tokens = new Tokens(opts.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS);
    this.#robots = new Robots(
      opts.robots ?? [],
      {
        minuteMs: windows.minuteMs,
        perMinute: limits.perRobotPerMinute,
        inboxLimit: opts.inboxLimit ?? 10_000,
      },
      readings,
    );
    for (const app of opts.apps) {
      const bySecret = this.#appsByCorp.get(app.corpId) ?? new Map<string, AppState>();
      if (bySecret.has(app.secret))
        throw new SimulatorConfigError('duplicate app secret', { agentId: app.agentId });
      bySecret.set(app.secret, { app, key: `${app.corpId}/${app.agentId}` });
      this.#appsByCorp.set(app.corpId, bySecret);
    }
  }

  /** WeCom's clock: the given clock plus the offset set through `POST /__sim/clock`. */
  now(): number {
    return this.#baseClock() + this.#clockOffsetMs;
  }

  get clockOffsetMs(): number {
    return this.#clockOffsetMs;
  }

  setClockOffset(ms: number): void {
    this.#clockOffsetMs = ms;
  }

  readings(): SimReadings {
    return { ...this.#readings };
  }

  /** Changes the readings for later calls; what the counters remember stays and is read the new way. */
  setReadings(input: unknown): SimReadings {
    this.#readings = resolveReadings(input, this.#readings);
    return this.readings();
  }

  directory(): SimDirectory {
    return structuredClone(this.#directory.source);
  }

  setDirectory(d: SimDirectory): void {
    this.#directory = new Directory(d);
  }

  countCall(path: FaultPath, ip: string): void {
    if (path === 'gettoken') this.#counters.gettokenCalls++;
    else if (path === 'send') this.#counters.sendCalls++;
    else if (path === 'recall') this.#counters.recallCalls++;
    else if (path === 'updateCard') this.#counters.cardUpdateCalls++;
    else if (path === 'contacts') this.#counters.contactsCalls++;
    this.#counters.callsByIp[ip] = (this.#counters.callsByIp[ip] ?? 0) + 1;
  }

  recordAnswer(errcode: number): void {
    const key = String(errcode);
    this.#counters.byErrcode[key] = (this.#counters.byErrcode[key] ?? 0) + 1;
    if (errcode === ERRCODE.apiFreqOutOfLimit) this.#counters.rateLimited++;
  }

  /** The answer every API call from a banned IP gets (ip-ban.ts), or undefined. */
  ipBanned(ip: string): ApiAnswer | undefined {
    const until = this.#ipBans.bannedUntil(ip, this.now());
    return until === undefined ? undefined : answer(ERRCODE.apiFreqOutOfLimit, `ip ${ip} banned`);
  }

  gettoken(corpid: string | null, corpsecret: string | null, ip: string): ApiAnswer {
    if (!corpid) return answer(ERRCODE.missingCorpId);
    if (!corpsecret) return answer(ERRCODE.missingSecret);
    const bySecret = this.#appsByCorp.get(corpid);
    if (bySecret === undefined) return answer(ERRCODE.invalidCorpId);
    const app = bySecret.get(corpsecret);
    if (app === undefined) {
      // WeCom: 40001 means a wrong secret here, not a bad token; repeated ones get the caller's IP banned.
      this.#ipBans.wrongSecret(ip, this.now(), this.#readings.ipBanAfter);
      return answer(ERRCODE.invalidSecret);
    }
    return answer(ERRCODE.ok, undefined, { ...this.#tokens.issue(app, this.now()) });
  }

  /** Makes every token issued so far answer 42001, as WeCom does when it invalidates early. */
  revokeAllTokens(): void {
    this.#tokens.revokeAll();
  }

  revokeToken(token: string | null): void {
    this.#tokens.revoke(token);
  }

  /** Authenticates and counts an API call against the app's per-API limits. */
  #admit(token: string | null, api: ApiName, now: number): Auth {
    if (!token) return { answer: answer(ERRCODE.missingAccessToken) };
    const found = this.#tokens.find(token, now);
    if (found === 'unknown') return { answer: answer(ERRCODE.invalidAccessToken) };
    if (found === 'expired') return { answer: answer(ERRCODE.accessTokenExpired) };
    const refused = this.#limits.admitApiCall(`${found.key}|${api}`, now);
    return refused === undefined
      ? { app: found }
      : { answer: answer(ERRCODE.apiFreqOutOfLimit, refused.detail) };
  }

  send(token: string | null, rawBody: string): ApiAnswer {
    const now = this.now();
    const auth = this.#admit(token, 'send', now);
    if ('answer' in auth) return auth.answer;
    const { app } = auth;

    const body = parseJsonObject(rawBody);
    if (body === undefined) return answer(ERRCODE.dataFormatError);
    const agentId = parseAgentId(body.agentid);
    if (agentId === undefined) return answer(ERRCODE.invalidAgentId);
    if (agentId !== app.app.agentId) return answer(ERRCODE.noPrivilegeForApp);
    const invalidMessage = validateMessage(body) ?? missingTaskId(body);
    if (invalidMessage !== undefined) return answer(invalidMessage.errcode, invalidMessage.detail);
    const recipients = parseRecipients(body);
    if (isRejection(recipients)) return answer(recipients.errcode, recipients.detail);
    const intervalS = duplicateCheckInterval(body);
    if (isRejection(intervalS)) return answer(intervalS.errcode, intervalS.detail);

    const resolved = this.#directory.resolve(recipients, agentId, this.#readings.partyReach, this.#seats);
    if (!resolved.anyValid) {
      this.#recordUndelivered(resolved, { agentId, msgtype: String(body.msgtype), at: now });
      // WeCom: "如果全部接收人无权限或不存在,则本次调用返回失败,errcode为81013". A body naming no
      // recipient at all gets the same answer here (assumed; the docs do not say).
      return answer(ERRCODE.allRecipientsInvalid, undefined, resolved.report);
    }

    const check = { appKey: app.key, agentId, body, rawBody, intervalS };
    const earlier = this.#duplicates.check(check, now);
    if (earlier !== undefined) {
      this.#counters.duplicatesSuppressed++;
      return answer(ERRCODE.ok, undefined, { ...resolved.report, msgid: earlier.msgid });
    }

    const refused = this.#limits.chargePersonTimes(app.key, `${app.key}|send`, resolved.personTimes, now);
    if (refused !== undefined) return answer(ERRCODE.apiFreqOutOfLimit, refused.detail);

    const msgid = this.#newMsgId();
    const delivered = this.#deliver(app, msgid, body, resolved, now);
    this.#recordUndelivered(resolved, { msgid, agentId, msgtype: String(body.msgtype), at: now });
    const entries = [...delivered.values()];
    this.#rememberSent(msgid, { app, at: now, entries });
    this.#duplicates.remember(check, msgid, now);

    const extra: Record<string, unknown> = { ...resolved.report, msgid };
    if (body.msgtype === 'template_card') {
      const card = body.template_card as Record<string, unknown>;
      const sent = {
        msgid,
        appKey: app.key,
        corpId: app.app.corpId,
        agentId,
        ...(typeof card.task_id === 'string' ? { taskId: card.task_id } : {}),
        card,
        entries: delivered,
      };
      this.#cards.remember(sent);
      if (wantsResponseCode(body)) extra.response_code = this.#cards.issueCode(sent, now);
    }
    return answer(ERRCODE.ok, undefined, extra);
  }

  /** `message/update_template_card` (cards.ts). */
  updateTemplateCard(token: string | null, rawBody: string): ApiAnswer {
    const now = this.now();
    const auth = this.#admit(token, 'updateCard', now);
    if ('answer' in auth) return auth.answer;
    const body = parseJsonObject(rawBody);
    if (body === undefined) return answer(ERRCODE.dataFormatError);
    const agentId = parseAgentId(body.agentid);
    if (agentId === undefined) return answer(ERRCODE.invalidAgentId);
    if (agentId !== auth.app.app.agentId) return answer(ERRCODE.noPrivilegeForApp);
    const ttlMs = this.#readings.responseCodeTtlHours * 3_600_000;
    return this.#cards.update(auth.app.key, body, now, ttlMs);
  }

  /** A member presses a button of a delivered card: the event WeCom would post, with a fresh response_code. */
  click(req: ClickRequest): Click {
    return this.#cards.click(req, this.now());
  }

  /**
   * Broadcasts count like direct sends: every member a party, tag or @all reaches uses up one of their own
   * per-member allowance, and is dropped silently once at its limit.
   */
  #deliver(
    app: AppState,
    msgid: string,
    body: Record<string, unknown>,
    resolved: Resolution,
    now: number,
  ): Map<string, ReceivedMessage> {
    const msgtype = String(body.msgtype);
    const entries = new Map<string, ReceivedMessage>();
    const agentId = app.app.agentId;
    for (const user of resolved.members) {
      const reason =
        user === ALL_MEMBERS_INBOX ? undefined : this.#limits.admitMember(`${app.key}|${user}`, now);
      if (reason !== undefined) {
        // WeCom answers errcode 0 and the member simply never sees the message.
        this.#counters.dropped++;
        this.#inboxes.drop({ msgid, agentId, userId: user, reason, at: now });
        continue;
      }
      const entry: ReceivedMessage = {
        msgid,
        agentId,
        msgtype,
        payload: body[msgtype],
        receivedAt: now,
        recalled: false,
      };
      this.#inboxes.put(user, entry);
      entries.set(user.toLowerCase(), entry);
      this.#counters.delivered++;
    }
    return entries;
  }

  /** The named members the send answer reports as invalid or unlicensed, for their inboxes. */
  #recordUndelivered(resolved: Resolution, base: Omit<UndeliveredMessage, 'userId' | 'reason'>): void {
    for (const reason of ['invaliduser', 'unlicenseduser'] as const) {
      const ids = resolved.report[reason];
      if (ids) for (const userId of ids.split('|')) this.#inboxes.undeliver({ ...base, userId, reason });
    }
  }

  #newMsgId(): string {
    this.#msgSeq++;
    return `${this.#msgSeq.toString(36)}_${randomBytes(12).toString('base64url')}`;
  }

  #rememberSent(msgid: string, rec: SentRecord): void {
    this.#sent.set(msgid, rec);
    for (const [id, old] of this.#sent) {
      if (rec.at - old.at <= SENT_RETENTION_MS) break;
      this.#sent.delete(id);
    }
  }

  recall(token: string | null, rawBody: string): ApiAnswer {
    const now = this.now();
    const auth = this.#admit(token, 'recall', now);
    if ('answer' in auth) return auth.answer;
    const body = parseJsonObject(rawBody);
    if (body === undefined) return answer(ERRCODE.dataFormatError);
    if (typeof body.msgid !== 'string' || body.msgid.length === 0) {
      return answer(ERRCODE.invalidParameter, 'msgid missing');
    }
    const rec = this.#sent.get(body.msgid);
    // Unknown msgids and other apps' msgids get the same answer, so an app cannot probe others (assumed).
    if (rec === undefined || rec.app !== auth.app) return answer(ERRCODE.invalidParameter, 'invalid msgid');
    if (now - rec.at > RECALL_WINDOW_MS) return answer(ERRCODE.recallTooLate);
    for (const entry of rec.entries) entry.recalled = true;
    return answer(ERRCODE.ok);
  }

  /** The contacts reads (contacts.ts). */
  contacts(api: ContactsApi, token: string | null, query: URLSearchParams): ApiAnswer {
    const auth = this.#admit(token, api, this.now());
    if ('answer' in auth) return auth.answer;
    return answerContacts(api, this.#directory, auth.app.app.agentId, query);
  }

  /** A robot's `webhook/send` (robots.ts). */
  robotSend(key: string | null, rawBody: string): ApiAnswer {
    return this.#robots.send(key, parseJsonObject(rawBody), this.now());
  }

  /** A robot's `webhook/upload_media` (robots.ts). */
  robotUpload(key: string | null, type: string | null, parts: FormPart[] | undefined): ApiAnswer {
    return this.#robots.upload(key, type, parts, this.now());
  }

  groups(): SimGroup[] {
    return this.#robots.groups();
  }

  groupInbox(robot: string): GroupMessage[] {
    return this.#robots.inbox(robot) ?? [];
  }

  /** Adds robots by key, or changes a known one's name or state. */
  setRobots(robots: readonly SimRobot[]): void {
    for (const r of robots) this.#robots.add(r);
  }

  stats(): SimStats {
    const now = this.now();
    return {
      ...this.#counters,
      ...this.#robots.counters(),
      byErrcode: { ...this.#counters.byErrcode },
      callsByIp: { ...this.#counters.callsByIp },
      readings: this.readings(),
      clockOffsetMs: this.#clockOffsetMs,
      blocks: this.#limits.blocks(now),
      ipBans: this.#ipBans.snapshot(now),
    };
  }

  inbox(userId: string): ReceivedMessage[] {
    return this.#inboxes.list(userId);
  }

  drops(): DroppedMessage[] {
    return this.#inboxes.drops();
  }

  undelivered(): UndeliveredMessage[] {
    return this.#inboxes.undelivered();
  }

  /** The directory's users (in its order), then everyone else who received something. */
  members(): SimMember[] {
    const withInbox = new Map(this.#inboxes.members().map((m) => [m.userid, m]));
    const listed = (this.#directory.source.users ?? []).map((u) => u.toLowerCase());
    const out: SimMember[] = listed.map((userid) => ({
      userid,
      inDirectory: true,
      messages: withInbox.get(userid)?.messages ?? 0,
      lastAt: withInbox.get(userid)?.lastAt ?? null,
    }));
    const seen = new Set(listed);
    for (const m of withInbox.values()) if (!seen.has(m.userid)) out.push({ ...m, inDirectory: false });
    return out;
  }

  duplicates(): SuppressedDuplicate[] {
    return this.#duplicates.suppressed();
  }

  /** Forgets everything WeCom remembers (tokens, counters, blocks, bans, inboxes); settings stay. */
  reset(): void {
    this.#tokens.clear();
    this.#counters = emptyCounters();
    this.#limits.clear();
    this.#ipBans.clear();
    this.#inboxes.clear();
    this.#sent = new Map();
    this.#duplicates.clear();
    this.#cards.clear();
    this.#robots.reset();
  }
}

export function parseJsonObject(raw: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
