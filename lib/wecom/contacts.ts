import type { ContactsApiName } from './client.js';
import { WecomApiError } from './errors.js';

/**
 * Whom a party, a tag or `@all` reaches, read from WeCom's contacts API with the app's own token (a self-built app
 * reads what its visible range holds, the same range its sends reach):
 * - party: `department/simplelist?id=` lists the party and every party below it; `user/simplelist?department_id=`
 *   lists each one's members (https://developer.work.weixin.qq.com/document/path/95350 and path/90200). Sub-parties
 *   are counted: WeCom does not say whether a send to a party reaches them, and counting them is the safe reading.
 *   `fetch_child` is not used (newer copies of the page drop it).
 * - tag: `tag/get?tagid=` lists its members and parties (path/90213), each party as above.
 * - `@all`: `agent/get?agentid=` gives the app's visible range (path/90227): users, parties and tags, as above.
 * Userids are case-folded (WeCom compares them without case).
 */
export type BroadcastTarget = { kind: 'all' } | { kind: 'party'; id: string } | { kind: 'tag'; id: string };

export const targetName = (t: BroadcastTarget): string => (t.kind === 'all' ? 'all' : `${t.kind}:${t.id}`);

/** What a broadcast reaches, as the contacts API tells it. */
export type Reach =
  | { status: 'members'; members: string[] }
  /** The app may not read it: size it from configuration. */
  | { status: 'forbidden'; errcode: number };

/**
 * The app may not call the contacts API (48002 API not allowed, 48009, 301002 token of another app). Outside its
 * visible range (60011), or an unknown party (60003) or tag (40068), the send itself reaches nobody there
 * ("如果部分接收人无权限或不存在,发送仍然执行,但会返回无效的部分"), so those count as no members.
 */
const FORBIDDEN = new Set([48002, 48009, 301002]);
const NOBODY = new Set([60011, 60003, 40068, 60123]);

type Call = (api: ContactsApiName, query: Record<string, string>) => Promise<Record<string, unknown>>;

/** Parties resolved at once. */
const PARALLEL = 5;

/**
 * Resolves one broadcast target through the contacts API. Errors other than "forbidden" and "nobody there" are
 * thrown (the message is retried; nothing was sent).
 *
 * @example await resolveTarget((api, q) => wecom.contacts(token, api, q), 1000002, { kind: 'party', id: '2' });
 */
export async function resolveTarget(call: Call, agentId: number, target: BroadcastTarget): Promise<Reach> {
  const members = new Set<string>();
  try {
    if (target.kind === 'party') await addParty(call, target.id, members);
    else if (target.kind === 'tag') await addTag(call, target.id, members);
    else {
      const range = await call('agent/get', { agentid: String(agentId) });
      const users = (range.allow_userinfos as { user?: { userid?: unknown }[] } | undefined)?.user ?? [];
      for (const u of users) if (typeof u.userid === 'string') members.add(u.userid.toLowerCase());
      const parties = (range.allow_partys as { partyid?: unknown[] } | undefined)?.partyid ?? [];
      await inParallel(parties.map(String), (p) => addParty(call, p, members));
      const tags = (range.allow_tags as { tagid?: unknown[] } | undefined)?.tagid ?? [];
      await inParallel(tags.map(String), (t) => addTag(call, t, members));
    }
  } catch (err) {
    if (err instanceof WecomApiError && FORBIDDEN.has(err.errcode))
      return { status: 'forbidden', errcode: err.errcode };
    throw err;
  }
  return { status: 'members', members: [...members] };
}

/** A call whose "nobody there" answers count as an empty answer. */
async function orNobody<T>(read: Promise<T>, empty: T): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof WecomApiError && NOBODY.has(err.errcode)) return empty;
    throw err;
  }
}

async function addParty(call: Call, party: string, members: Set<string>): Promise<void> {
  const tree = await orNobody(call('department/simplelist', { id: party }), {});
  const ids = ((tree.department_id as { id?: unknown }[] | undefined) ?? []).map((d) => String(d.id));
  await inParallel(ids, async (id) => {
    const list = await orNobody(call('user/simplelist', { department_id: id }), {});
    for (const u of (list.userlist as { userid?: unknown }[] | undefined) ?? [])
      if (typeof u.userid === 'string') members.add(u.userid.toLowerCase());
  });
}

async function addTag(call: Call, tag: string, members: Set<string>): Promise<void> {
  const t = await orNobody(call('tag/get', { tagid: tag }), {});
  for (const u of (t.userlist as { userid?: unknown }[] | undefined) ?? [])
    if (typeof u.userid === 'string') members.add(u.userid.toLowerCase());
  await inParallel(((t.partylist as unknown[] | undefined) ?? []).map(String), (p) =>
    addParty(call, p, members),
  );
}

async function inParallel<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(run));
}
