import { SingleFlight } from '#lib/util/index.js';
import type { WecomApi } from './client.js';
import type { TokenApp, TokenCache } from './token-cache.js';

/** An app's visible range (可见范围) as `agent/get` answers it (path/90227): ids as strings, userids as given. */
export interface VisibleRange {
  users: string[];
  parties: string[];
  tags: string[];
}

/** Recipient ids by WeCom's field names. */
export interface RecipientIds {
  touser: string[];
  toparty: string[];
  totag: string[];
}

/** Which of the asked ids the range leaves out, and which it may or may not cover. */
export interface RangeCoverage {
  outside: RecipientIds;
  /** Not listed in the range, but possibly covered by one of its parties or tags, which agent/get does not expand. */
  unknown: RecipientIds;
}

/** WeCom's root department: a range holding it covers the whole corp. */
export const ROOT_PARTY = '1';

/** `@all` means "everyone in the range", so it is inside by definition. */
const ALL = '@all';

/** The range from an `agent/get` answer (`allow_userinfos.user[].userid`, `allow_partys.partyid[]`, `allow_tags.tagid[]`). */
export function parseVisibleRange(answer: Record<string, unknown>): VisibleRange {
  const users = (answer.allow_userinfos as { user?: { userid?: unknown }[] } | undefined)?.user ?? [];
  const parties = (answer.allow_partys as { partyid?: unknown[] } | undefined)?.partyid ?? [];
  const tags = (answer.allow_tags as { tagid?: unknown[] } | undefined)?.tagid ?? [];
  return {
    users: users.flatMap((u) => (typeof u.userid === 'string' ? [u.userid] : [])),
    parties: parties.map(String),
    tags: tags.map(String),
  };
}

/**
 * Which of `wanted` the range leaves out. Only what agent/get itself says is used: a user listed in the range is
 * inside; a user or party not listed is outside only when the range has no party or tag that could hold it (whom
 * a party or tag holds takes contacts reads the app may not be allowed), else it is `unknown`. A tag is inside only when listed. Userids compare without case, as WeCom's
 * do; the answer keeps the caller's spelling.
 *
 * @example rangeCoverage({ users: ['lisi'], parties: [], tags: [] }, { touser: ['zhangsan'], toparty: [], totag: [] })
 * // → { outside: { touser: ['zhangsan'], toparty: [], totag: [] }, unknown: { touser: [], toparty: [], totag: [] } }
 */
export function rangeCoverage(range: VisibleRange, wanted: RecipientIds): RangeCoverage {
  const none = (): RecipientIds => ({ touser: [], toparty: [], totag: [] });
  const result = { outside: none(), unknown: none() };
  if (range.parties.includes(ROOT_PARTY)) return result;
  const users = new Set(range.users.map((u) => u.toLowerCase()));
  const parties = new Set(range.parties);
  const tags = new Set(range.tags);
  // A party of the range holds its members and the parties below it; a tag of the range, its members and parties.
  const notListed = parties.size + tags.size > 0 ? result.unknown : result.outside;
  for (const u of wanted.touser) if (u !== ALL && !users.has(u.toLowerCase())) notListed.touser.push(u);
  for (const p of wanted.toparty) if (!parties.has(p)) notListed.toparty.push(p);
  for (const t of wanted.totag) if (!tags.has(t)) result.outside.totag.push(t);
  return result;
}

export interface VisibleRangeCacheOptions {
  /** How long a container reuses an answer (default 60 s: doctor runs and retries must not call WeCom each time). */
  ttlMs?: number;
  now?: () => number;
}

/**
 * Each app's visible range through `agent/get` with its token, remembered per container for `ttlMs`; concurrent
 * readers share one call. Failures are not remembered, so a fixed trusted IP shows at once.
 *
 * @example const { range, fetchedAtMs } = await ranges.get(app);
 */
export class VisibleRangeCache {
  private readonly memory = new Map<string, { range: VisibleRange; fetchedAtMs: number }>();
  private readonly flights = new SingleFlight<string, { range: VisibleRange; fetchedAtMs: number }>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly tokens: Pick<TokenCache, 'withToken'>,
    private readonly wecom: Pick<WecomApi, 'contacts'>,
    opts: VisibleRangeCacheOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  async get(app: TokenApp): Promise<{ range: VisibleRange; fetchedAtMs: number }> {
    const key = `${app.corpId}#${app.agentId}`;
    const known = this.memory.get(key);
    if (known && this.now() - known.fetchedAtMs < this.ttlMs) return known;
    return this.flights.run(key, async () => {
      const answer = await this.tokens.withToken(app, (token) =>
        this.wecom.contacts(token, 'agent/get', { agentid: String(app.agentId) }),
      );
      const entry = { range: parseVisibleRange(answer), fetchedAtMs: this.now() };
      this.memory.set(key, entry);
      return entry;
    });
  }
}
