import { createHash, randomBytes } from 'node:crypto';
import { ERRCODE, errmsgFor } from './errcodes.js';
import { SimulatorConfigError } from './errors.js';
import { Tokens } from './tokens.js';
import type {
  DroppedMessage,
  DropReason,
  ReceivedMessage,
  SimApp,
  SimDirectory,
  SimLimits,
  SimStats,
  SimulatorOptions,
  SimWindows,
} from './types.js';
import {
  duplicateCheckInterval,
  isRejection,
  MAX_DUPLICATE_CHECK_INTERVAL_S,
  parseAgentId,
  parseRecipients,
  type Recipients,
  validateMessage,
  wantsResponseCode,
} from './validation.js';
import { FixedWindowCounter } from './windows.js';

/** WeCom defaults (SPEC §5): corp per API 10,000/min and 150,000/h, member 30/min and 1,000/h. */
export const DEFAULT_LIMITS: SimLimits = {
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
const DROPS_LIMIT = 100_000;
/** Inbox key for `touser: '@all'` when no directory says who "all" is. */
export const ALL_MEMBERS_INBOX = '@all';

export type ApiAnswer = Record<string, unknown> & { errcode: number; errmsg: string };
export type ApiName = 'send' | 'recall';

interface AppState {
  app: SimApp;
  key: string;
}

interface SentRecord {
  app: AppState;
  at: number;
  entries: ReceivedMessage[];
}

interface Fingerprint {
  msgid: string;
  at: number;
}

interface Directory {
  users?: Set<string>;
  parties?: Set<string>;
  tags?: Set<string>;
  unlicensed: Set<string>;
  partyMembers: Map<string, string[]>;
  tagMembers: Map<string, string[]>;
}

type Auth = { app: AppState } | { answer: ApiAnswer };

const lower = (ids: string[] | undefined): Set<string> | undefined =>
  ids === undefined ? undefined : new Set(ids.map((id) => id.toLowerCase()));

const toMemberMap = (m: Record<string, string[]> | undefined): Map<string, string[]> =>
  new Map(Object.entries(m ?? {}).map(([k, v]) => [k, v.map((id) => id.toLowerCase())]));

function answer(errcode: number, detail?: string, extra: Record<string, unknown> = {}): ApiAnswer {
  return { errcode, errmsg: errmsgFor(errcode, detail), ...extra };
}

function emptyStats(): SimStats {
  return {
    gettokenCalls: 0,
    sendCalls: 0,
    recallCalls: 0,
    delivered: 0,
    dropped: 0,
    rateLimited: 0,
    duplicatesSuppressed: 0,
    byErrcode: {},
  };
}

/** WeCom's server-side state for one simulated corp: apps, tokens, limits, inboxes. No HTTP here. */
export class Corp {
  readonly #clock: () => number;
  readonly #limits: SimLimits;
  readonly #windows: SimWindows;
  readonly #tokens: Tokens<AppState>;
  readonly #dayQuota: number;
  readonly #seats: number;
  readonly #inboxLimit: number;
  readonly #directory: Directory | undefined;
  readonly #appsByCorp = new Map<string, Map<string, AppState>>();

  #stats = emptyStats();
  readonly #apiMinute: FixedWindowCounter;
  readonly #apiHour: FixedWindowCounter;
  readonly #blockedUntil = new Map<string, number>();
  readonly #personTimesDay: FixedWindowCounter;
  readonly #memberMinute: FixedWindowCounter;
  readonly #memberHour: FixedWindowCounter;
  #inboxes = new Map<string, ReceivedMessage[]>();
  #drops: DroppedMessage[] = [];
  #sent = new Map<string, SentRecord>();
  #fingerprints = new Map<string, Fingerprint>();
  #msgSeq = 0;

  constructor(opts: SimulatorOptions) {
    if (opts.apps.length === 0) throw new SimulatorConfigError('at least one app is required');
    this.#clock = opts.clock ?? Date.now;
    this.#limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.#windows = { ...DEFAULT_WINDOWS, ...opts.windows };
    this.#tokens = new Tokens(opts.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS);
    this.#seats = opts.seats ?? DEFAULT_SEATS;
    this.#dayQuota = this.#seats * PERSON_TIMES_PER_SEAT_PER_DAY;
    this.#inboxLimit = opts.inboxLimit ?? 10_000;
    this.#directory = opts.directory === undefined ? undefined : this.#buildDirectory(opts.directory);
    this.#apiMinute = new FixedWindowCounter(this.#windows.minuteMs);
    this.#apiHour = new FixedWindowCounter(this.#windows.hourMs);
    // WeCom's day starts at midnight China Standard Time (UTC+8); scaled test days keep epoch alignment.
    this.#personTimesDay = new FixedWindowCounter(
      this.#windows.dayMs,
      this.#windows.dayMs === DEFAULT_WINDOWS.dayMs ? 8 * 3_600_000 : 0,
    );
    this.#memberMinute = new FixedWindowCounter(this.#windows.minuteMs);
    this.#memberHour = new FixedWindowCounter(this.#windows.hourMs);
    for (const app of opts.apps) {
      const bySecret = this.#appsByCorp.get(app.corpId) ?? new Map<string, AppState>();
      if (bySecret.has(app.secret))
        throw new SimulatorConfigError('duplicate app secret', { agentId: app.agentId });
      bySecret.set(app.secret, { app, key: `${app.corpId}/${app.agentId}` });
      this.#appsByCorp.set(app.corpId, bySecret);
    }
  }

  #buildDirectory(d: SimDirectory): Directory {
    return {
      users: lower(d.users),
      parties: d.parties === undefined ? undefined : new Set(d.parties),
      tags: d.tags === undefined ? undefined : new Set(d.tags),
      unlicensed: lower(d.unlicensedUsers) ?? new Set(),
      partyMembers: toMemberMap(d.partyMembers),
      tagMembers: toMemberMap(d.tagMembers),
    };
  }

  now(): number {
    return this.#clock();
  }

  countCall(path: 'gettoken' | ApiName): void {
    if (path === 'gettoken') this.#stats.gettokenCalls++;
    else if (path === 'send') this.#stats.sendCalls++;
    else this.#stats.recallCalls++;
  }

  recordAnswer(errcode: number): void {
    const key = String(errcode);
    this.#stats.byErrcode[key] = (this.#stats.byErrcode[key] ?? 0) + 1;
    if (errcode === ERRCODE.apiFreqOutOfLimit) this.#stats.rateLimited++;
  }

  gettoken(corpid: string | null, corpsecret: string | null): ApiAnswer {
    if (!corpid) return answer(ERRCODE.missingCorpId);
    if (!corpsecret) return answer(ERRCODE.missingSecret);
    const bySecret = this.#appsByCorp.get(corpid);
    if (bySecret === undefined) return answer(ERRCODE.invalidCorpId);
    const app = bySecret.get(corpsecret);
    // WeCom: 40001 means a wrong secret here, not a bad token.
    if (app === undefined) return answer(ERRCODE.invalidSecret);
    return answer(ERRCODE.ok, undefined, { ...this.#tokens.issue(app, this.#clock()) });
  }

  /** Makes every token issued so far answer 42001, as WeCom does when it invalidates early. */
  revokeAllTokens(): void {
    this.#tokens.revokeAll();
  }

  revokeToken(token: string | null): void {
    this.#tokens.revoke(token);
  }

  #authenticate(token: string | null, now: number): Auth {
    if (!token) return { answer: answer(ERRCODE.missingAccessToken) };
    const found = this.#tokens.find(token, now);
    if (found === 'unknown') return { answer: answer(ERRCODE.invalidAccessToken) };
    if (found === 'expired') return { answer: answer(ERRCODE.accessTokenExpired) };
    return { app: found };
  }

  /**
   * WeCom's frequency interception lasts as long as the limit's own period: a minute-limit hit blocks
   * the API for 60 s from that moment, an hour-limit hit for an hour. Blocked calls are not counted.
   */
  #admitApiCall(app: AppState, api: ApiName, now: number): ApiAnswer | undefined {
    const key = `${app.key}|${api}`;
    const blockedUntil = this.#blockedUntil.get(key);
    if (blockedUntil !== undefined) {
      if (now < blockedUntil) return answer(ERRCODE.apiFreqOutOfLimit, 'app blocked');
      this.#blockedUntil.delete(key);
    }
    if (this.#apiMinute.add(key, now) > this.#limits.perAppPerMinute) {
      this.#blockedUntil.set(key, now + this.#windows.minuteMs);
      return answer(ERRCODE.apiFreqOutOfLimit, 'minute limit');
    }
    if (this.#apiHour.add(key, now) > this.#limits.perAppPerHour) {
      this.#blockedUntil.set(key, now + this.#windows.hourMs);
      return answer(ERRCODE.apiFreqOutOfLimit, 'hour limit');
    }
    return undefined;
  }

  send(token: string | null, rawBody: string): ApiAnswer {
    const now = this.#clock();
    const auth = this.#authenticate(token, now);
    if ('answer' in auth) return auth.answer;
    const { app } = auth;
    const limited = this.#admitApiCall(app, 'send', now);
    if (limited !== undefined) return limited;

    const body = parseJsonObject(rawBody);
    if (body === undefined) return answer(ERRCODE.dataFormatError);
    const agentId = parseAgentId(body.agentid);
    if (agentId === undefined) return answer(ERRCODE.invalidAgentId);
    if (agentId !== app.app.agentId) return answer(ERRCODE.noPrivilegeForApp);
    const invalidMessage = validateMessage(body);
    if (invalidMessage !== undefined) return answer(invalidMessage.errcode, invalidMessage.detail);
    const recipients = parseRecipients(body);
    if (isRejection(recipients)) return answer(recipients.errcode, recipients.detail);
    const interval = duplicateCheckInterval(body);
    if (isRejection(interval)) return answer(interval.errcode, interval.detail);

    const resolved = this.#resolve(recipients);
    if (!resolved.anyValid) {
      // WeCom: "如果全部接收人无权限或不存在,则本次调用返回失败,errcode为81013". A body naming no
      // recipient at all gets the same answer here (assumed; the docs do not say).
      return answer(ERRCODE.allRecipientsInvalid, undefined, resolved.report);
    }

    // Every accepted message is fingerprinted; a later copy sent with enable_duplicate_check is compared
    // against it, which is what makes a resend after an unknown outcome safe.
    const fingerprint = fingerprintOf(body, agentId);
    this.#pruneFingerprints(now);
    if (body.enable_duplicate_check === 1 || body.enable_duplicate_check === true) {
      const previous = this.#fingerprints.get(fingerprint);
      if (previous !== undefined && now - previous.at < interval * 1000) {
        this.#stats.duplicatesSuppressed++;
        return answer(ERRCODE.ok, undefined, { ...resolved.report, msgid: previous.msgid });
      }
    }

    const dayKey = app.key;
    if (this.#personTimesDay.current(dayKey, now) + resolved.personTimes > this.#dayQuota) {
      return answer(ERRCODE.apiFreqOutOfLimit, 'daily person-times limit');
    }
    this.#personTimesDay.add(dayKey, now, resolved.personTimes);

    const msgid = this.#newMsgId();
    const msgtype = String(body.msgtype);
    const entries = this.#deliver(app, msgid, msgtype, body[msgtype], resolved.members, now);
    this.#rememberSent(msgid, { app, at: now, entries });
    this.#fingerprints.delete(fingerprint);
    this.#fingerprints.set(fingerprint, { msgid, at: now });

    const extra: Record<string, unknown> = { ...resolved.report, msgid };
    if (wantsResponseCode(body)) extra.response_code = randomBytes(24).toString('base64url');
    return answer(ERRCODE.ok, undefined, extra);
  }

  #resolve(r: Recipients): {
    anyValid: boolean;
    members: string[];
    personTimes: number;
    report: Record<string, string>;
  } {
    const d = this.#directory;
    const report: Record<string, string> = {};
    if (r.all) {
      if (d?.users === undefined)
        return { anyValid: true, members: [ALL_MEMBERS_INBOX], personTimes: this.#seats, report };
      const members = [...d.users].filter((u) => !d.unlicensed.has(u));
      return { anyValid: true, members, personTimes: members.length, report };
    }
    const members = new Set<string>();
    const invalidUsers: string[] = [];
    const unlicensed: string[] = [];
    let valid = 0;
    for (const raw of r.users) {
      // WeCom: userids are case-insensitive and reported back in lower case.
      const user = raw.toLowerCase();
      if (d?.users !== undefined && !d.users.has(user) && !d.unlicensed.has(user)) {
        invalidUsers.push(user);
        continue;
      }
      valid++;
      if (d?.unlicensed.has(user)) unlicensed.push(user);
      else members.add(user);
    }
    const expand = (
      ids: string[],
      known: Set<string> | undefined,
      map: Map<string, string[]> | undefined,
    ) => {
      const invalid: string[] = [];
      for (const id of ids) {
        if (known !== undefined && !known.has(id)) {
          invalid.push(id);
          continue;
        }
        valid++;
        for (const m of map?.get(id) ?? []) if (!d?.unlicensed.has(m)) members.add(m);
      }
      return invalid;
    };
    const invalidParties = expand(r.parties, d?.parties, d?.partyMembers);
    const invalidTags = expand(r.tags, d?.tags, d?.tagMembers);
    if (invalidUsers.length > 0) report.invaliduser = invalidUsers.join('|');
    if (invalidParties.length > 0) report.invalidparty = invalidParties.join('|');
    if (invalidTags.length > 0) report.invalidtag = invalidTags.join('|');
    if (unlicensed.length > 0) report.unlicenseduser = unlicensed.join('|');
    const list = [...members];
    return { anyValid: valid > 0, members: list, personTimes: list.length, report };
  }

  #deliver(
    app: AppState,
    msgid: string,
    msgtype: string,
    payload: unknown,
    members: string[],
    now: number,
  ): ReceivedMessage[] {
    const entries: ReceivedMessage[] = [];
    const agentId = app.app.agentId;
    for (const user of members) {
      const reason = user === ALL_MEMBERS_INBOX ? undefined : this.#memberOverLimit(app, user, now);
      if (reason !== undefined) {
        // WeCom answers errcode 0 and the member simply never sees the message.
        this.#stats.dropped++;
        this.#drops.push({ msgid, agentId, userId: user, reason, at: now });
        if (this.#drops.length > 2 * DROPS_LIMIT) this.#drops.splice(0, this.#drops.length - DROPS_LIMIT);
        continue;
      }
      const entry: ReceivedMessage = { msgid, agentId, msgtype, payload, receivedAt: now, recalled: false };
      let inbox = this.#inboxes.get(user);
      if (inbox === undefined) {
        inbox = [];
        this.#inboxes.set(user, inbox);
      }
      inbox.push(entry);
      // Trim in bulk so the cost stays amortised O(1) per delivery.
      if (inbox.length > 2 * this.#inboxLimit) inbox.splice(0, inbox.length - this.#inboxLimit);
      entries.push(entry);
      this.#stats.delivered++;
    }
    return entries;
  }

  /** Dropped sends are not counted: only messages the member actually received use up the limit. */
  #memberOverLimit(app: AppState, user: string, now: number): DropReason | undefined {
    const key = `${app.key}|${user}`;
    if (this.#memberMinute.current(key, now) >= this.#limits.perMemberPerMinute) return 'member_minute';
    if (this.#memberHour.current(key, now) >= this.#limits.perMemberPerHour) return 'member_hour';
    this.#memberMinute.add(key, now);
    this.#memberHour.add(key, now);
    return undefined;
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

  #pruneFingerprints(now: number): void {
    for (const [fp, rec] of this.#fingerprints) {
      if (now - rec.at <= MAX_DUPLICATE_CHECK_INTERVAL_S * 1000) break;
      this.#fingerprints.delete(fp);
    }
  }

  recall(token: string | null, rawBody: string): ApiAnswer {
    const now = this.#clock();
    const auth = this.#authenticate(token, now);
    if ('answer' in auth) return auth.answer;
    const limited = this.#admitApiCall(auth.app, 'recall', now);
    if (limited !== undefined) return limited;
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

  stats(): SimStats {
    return { ...this.#stats, byErrcode: { ...this.#stats.byErrcode } };
  }

  inbox(userId: string): ReceivedMessage[] {
    const inbox = this.#inboxes.get(userId === ALL_MEMBERS_INBOX ? userId : userId.toLowerCase()) ?? [];
    return inbox.slice(-this.#inboxLimit).map((m) => ({ ...m }));
  }

  drops(): DroppedMessage[] {
    return this.#drops.slice(-DROPS_LIMIT).map((d) => ({ ...d }));
  }

  reset(): void {
    this.#tokens.clear();
    this.#stats = emptyStats();
    this.#apiMinute.clear();
    this.#apiHour.clear();
    this.#blockedUntil.clear();
    this.#personTimesDay.clear();
    this.#memberMinute.clear();
    this.#memberHour.clear();
    this.#inboxes = new Map();
    this.#drops = [];
    this.#sent = new Map();
    this.#fingerprints = new Map();
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

/** WeCom compares "同样内容(请求json)": same app, type, message object and recipients. */
function fingerprintOf(body: Record<string, unknown>, agentId: number): string {
  const msgtype = String(body.msgtype);
  const key = JSON.stringify([agentId, msgtype, body[msgtype], body.touser, body.toparty, body.totag]);
  return createHash('sha1').update(key).digest('base64url');
}
