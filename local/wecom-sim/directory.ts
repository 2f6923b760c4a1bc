import { InspectionRequestError } from './errors.js';
import type { SimReadings } from './readings.js';
import type { SimAppRange, SimDirectory } from './types.js';
import type { Recipients } from './validation.js';

/** WeCom's root department; every party without a parent hangs under it. */
export const ROOT_PARTY = '1';
/** Inbox key for `touser: '@all'` when no directory says who "all" is. */
export const ALL_MEMBERS_INBOX = '@all';

export interface Resolution {
  anyValid: boolean;
  /** Lower-cased userids that receive the message (or ALL_MEMBERS_INBOX). */
  members: string[];
  personTimes: number;
  /** invaliduser / invalidparty / invalidtag / unlicenseduser, as WeCom reports them. */
  report: Record<string, string>;
}

interface AppRange {
  users: Set<string>;
  parties: string[];
  tags: string[];
  readContacts: boolean;
}

const lower = (ids: string[] | undefined): Set<string> | undefined =>
  ids === undefined ? undefined : new Set(ids.map((id) => id.toLowerCase()));

const toMap = (m: Record<string, string[]> | undefined, fold: boolean): Map<string, string[]> =>
  new Map(Object.entries(m ?? {}).map(([k, v]) => [k, fold ? v.map((id) => id.toLowerCase()) : v]));

/** The simulated corp's contacts: who exists, who belongs where, and what each app may see. */
export class Directory {
  readonly source: SimDirectory;
  readonly users: Set<string> | undefined;
  readonly parties: Set<string> | undefined;
  readonly tags: Set<string> | undefined;
  readonly unlicensed: Set<string>;
  readonly #partyMembers: Map<string, string[]>;
  readonly #parents = new Map<string, string>();
  readonly #children = new Map<string, string[]>();
  readonly #tagMembers: Map<string, string[]>;
  readonly #tagParties: Map<string, string[]>;
  readonly #ranges = new Map<number, AppRange>();
  readonly #visible = new Map<number, Set<string>>();

  constructor(d: SimDirectory = {}) {
    this.source = structuredClone(d);
    this.users = lower(d.users);
    this.parties = d.parties === undefined ? undefined : new Set(d.parties);
    this.tags = d.tags === undefined ? undefined : new Set(d.tags);
    this.unlicensed = lower(d.unlicensedUsers) ?? new Set();
    this.#partyMembers = toMap(d.partyMembers, true);
    this.#tagMembers = toMap(d.tagMembers, true);
    this.#tagParties = toMap(d.tagParties, false);
    for (const party of this.allParties()) {
      const parent = d.partyParents?.[party] ?? (party === ROOT_PARTY ? undefined : ROOT_PARTY);
      if (parent === undefined) continue;
      this.#parents.set(party, parent);
      this.#children.set(parent, [...(this.#children.get(parent) ?? []), party]);
    }
    for (const [agentId, r] of Object.entries(d.apps ?? {})) {
      this.#ranges.set(Number(agentId), {
        users: lower(r.users) ?? new Set(),
        parties: r.parties ?? [],
        tags: r.tags ?? [],
        readContacts: r.readContacts !== false,
      });
    }
  }

  /** Every party id the directory mentions (the given list when there is one). */
  allParties(): string[] {
    if (this.source.parties !== undefined) return [...this.source.parties];
    const ids = new Set<string>([ROOT_PARTY]);
    const d = this.source;
    for (const id of Object.keys(d.partyMembers ?? {})) ids.add(id);
    for (const [id, parent] of Object.entries(d.partyParents ?? {})) ids.add(id).add(parent);
    for (const list of Object.values(d.tagParties ?? {})) for (const id of list) ids.add(id);
    return [...ids];
  }

  parentOf(party: string): string | undefined {
    return this.#parents.get(party);
  }

  range(agentId: number): AppRange | undefined {
    return this.#ranges.get(agentId);
  }

  /** The party and, under the `subtree` reading, every party below it. */
  partiesReached(party: string, reach: SimReadings['partyReach']): string[] {
    if (reach === 'direct') return [party];
    const out: string[] = [];
    const stack = [party];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const p = stack.pop() as string;
      if (seen.has(p)) continue;
      seen.add(p);
      out.push(p);
      stack.push(...(this.#children.get(p) ?? []));
    }
    return out;
  }

  membersOfParty(party: string, reach: SimReadings['partyReach']): string[] {
    return this.partiesReached(party, reach).flatMap((p) => this.#partyMembers.get(p) ?? []);
  }

  /** Parties of a member (the `department` field of user/simplelist). */
  partiesOf(user: string): string[] {
    const out: string[] = [];
    for (const [party, members] of this.#partyMembers) if (members.includes(user)) out.push(party);
    return out;
  }

  tagUsers(tag: string): string[] {
    return this.#tagMembers.get(tag) ?? [];
  }

  tagPartyIds(tag: string): string[] {
    return this.#tagParties.get(tag) ?? [];
  }

  membersOfTag(tag: string, reach: SimReadings['partyReach']): string[] {
    return [...this.tagUsers(tag), ...this.tagPartyIds(tag).flatMap((p) => this.membersOfParty(p, reach))];
  }

  /** Whether a party lies in the app's visible range (a range party includes the parties below it). */
  partyVisible(agentId: number, party: string): boolean {
    const range = this.#ranges.get(agentId);
    if (range === undefined) return true;
    for (let p: string | undefined = party; p !== undefined; p = this.#parents.get(p)) {
      if (range.parties.includes(p)) return true;
    }
    return false;
  }

  /** Everyone in the app's visible range, or undefined when the app sees the whole corp. */
  visibleMembers(agentId: number): Set<string> | undefined {
    const range = this.#ranges.get(agentId);
    if (range === undefined) return undefined;
    let visible = this.#visible.get(agentId);
    if (visible === undefined) {
      visible = new Set(range.users);
      for (const p of range.parties) for (const m of this.membersOfParty(p, 'subtree')) visible.add(m);
      for (const t of range.tags) for (const m of this.membersOfTag(t, 'subtree')) visible.add(m);
      this.#visible.set(agentId, visible);
    }
    return visible;
  }

  /**
   * Whom a send reaches and what WeCom reports back. WeCom: userids are case-insensitive and reported in lower
   * case; recipients outside the app's visible range are invalid ("权限包含应用可见范围"); unlicensed members are
   * in range but never receive anything.
   */
  resolve(r: Recipients, agentId: number, reach: SimReadings['partyReach'], seats: number): Resolution {
    const visible = this.visibleMembers(agentId);
    const report: Record<string, string> = {};
    if (r.all) {
      const everyone = visible ?? this.users;
      if (everyone === undefined)
        return { anyValid: true, members: [ALL_MEMBERS_INBOX], personTimes: seats, report };
      const members = [...everyone].filter((u) => !this.unlicensed.has(u));
      return { anyValid: true, members, personTimes: members.length, report };
    }
    const members = new Set<string>();
    const invalid = { users: [] as string[], parties: [] as string[], tags: [] as string[] };
    const unlicensed: string[] = [];
    let valid = 0;
    const reachOnly = (ids: string[]) => {
      for (const m of ids)
        if (!this.unlicensed.has(m) && (visible === undefined || visible.has(m))) members.add(m);
    };
    for (const raw of r.users) {
      const user = raw.toLowerCase();
      const known = this.users === undefined || this.users.has(user) || this.unlicensed.has(user);
      if (!known || (visible !== undefined && !visible.has(user))) {
        invalid.users.push(user);
        continue;
      }
      valid++;
      if (this.unlicensed.has(user)) unlicensed.push(user);
      else members.add(user);
    }
    for (const party of r.parties) {
      if ((this.parties !== undefined && !this.parties.has(party)) || !this.partyVisible(agentId, party)) {
        invalid.parties.push(party);
        continue;
      }
      valid++;
      reachOnly(this.membersOfParty(party, reach));
    }
    for (const tag of r.tags) {
      if (this.tags !== undefined && !this.tags.has(tag)) {
        invalid.tags.push(tag);
        continue;
      }
      valid++;
      reachOnly(this.membersOfTag(tag, reach));
    }
    if (invalid.users.length > 0) report.invaliduser = invalid.users.join('|');
    if (invalid.parties.length > 0) report.invalidparty = invalid.parties.join('|');
    if (invalid.tags.length > 0) report.invalidtag = invalid.tags.join('|');
    if (unlicensed.length > 0) report.unlicenseduser = unlicensed.join('|');
    const list = [...members];
    return { anyValid: valid > 0, members: list, personTimes: list.length, report };
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function idList(v: unknown, field: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((id) => typeof id === 'string' || Number.isInteger(id)))
    throw new InspectionRequestError(`${field} must be an array of ids`, { field });
  return v.map(String);
}

function idLists(v: unknown, field: string): Record<string, string[]> | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v)) throw new InspectionRequestError(`${field} must map ids to arrays of ids`, { field });
  return Object.fromEntries(Object.entries(v).map(([k, list]) => [k, idList(list, `${field}.${k}`) ?? []]));
}

function appRange(v: unknown, field: string): SimAppRange {
  if (!isRecord(v)) throw new InspectionRequestError(`${field} must be an object`, { field });
  const known = new Set(['users', 'parties', 'tags', 'readContacts']);
  const unknown = Object.keys(v).find((k) => !known.has(k));
  if (unknown !== undefined) throw new InspectionRequestError(`unknown field ${field}.${unknown}`);
  if (v.readContacts !== undefined && typeof v.readContacts !== 'boolean')
    throw new InspectionRequestError(`${field}.readContacts must be a boolean`);
  const out: SimAppRange = {};
  for (const key of ['users', 'parties', 'tags'] as const) {
    const ids = idList(v[key], `${field}.${key}`);
    if (ids !== undefined) out[key] = ids;
  }
  if (v.readContacts !== undefined) out.readContacts = v.readContacts as boolean;
  return out;
}

/** Checks a directory received as JSON (`POST /__sim/directory`); ids may be numbers, as in WeCom's JSON. */
export function parseDirectory(raw: unknown): SimDirectory {
  if (!isRecord(raw)) throw new InspectionRequestError('directory must be a JSON object');
  const lists = ['users', 'parties', 'tags', 'unlicensedUsers'] as const;
  const maps = ['partyMembers', 'tagMembers', 'tagParties'] as const;
  const known = new Set<string>([...lists, ...maps, 'partyParents', 'apps']);
  const unknown = Object.keys(raw).find((k) => !known.has(k));
  if (unknown !== undefined) throw new InspectionRequestError(`unknown directory field ${unknown}`);
  const d: SimDirectory = {};
  for (const key of lists) {
    const ids = idList(raw[key], key);
    if (ids !== undefined) d[key] = ids;
  }
  for (const key of maps) {
    const m = idLists(raw[key], key);
    if (m !== undefined) d[key] = m;
  }
  if (raw.partyParents !== undefined) {
    const isId = (p: unknown) => typeof p === 'string' || Number.isInteger(p);
    if (!isRecord(raw.partyParents) || !Object.values(raw.partyParents).every(isId))
      throw new InspectionRequestError('partyParents must map party ids to party ids');
    d.partyParents = Object.fromEntries(Object.entries(raw.partyParents).map(([k, p]) => [k, String(p)]));
  }
  if (raw.apps !== undefined) {
    if (!isRecord(raw.apps)) throw new InspectionRequestError('apps must map agentids to visible ranges');
    d.apps = Object.fromEntries(Object.entries(raw.apps).map(([id, r]) => [id, appRange(r, `apps.${id}`)]));
  }
  return d;
}
