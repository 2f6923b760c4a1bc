import type { Directory } from './directory.js';
import { ROOT_PARTY } from './directory.js';
import { type ApiAnswer, apiAnswer, ERRCODE } from './errcodes.js';

/**
 * The contacts (通讯录) reads a gateway may use to learn whom a party, a tag or `@all` reaches, answered from the
 * simulator's directory for a self-built app (自建应用) token:
 * - GET  /cgi-bin/agent/get?agentid=ID — the app's visible range: allow_userinfos / allow_partys / allow_tags
 *   (https://developer.work.weixin.qq.com/document/path/90227; "企业仅可获取当前凭证对应的应用").
 * - GET  /cgi-bin/department/simplelist?id=ID — the party and every party below it, `{id, parentid, order}`;
 *   without id every party; a self-built app only gets parties in its visible range (path/95350).
 * - GET  /cgi-bin/user/simplelist?department_id=ID[&fetch_child=1] — `userlist: [{userid, name, department}]`;
 *   "应用须拥有指定部门的查看权限" (path/90200). Newer copies of the page drop `fetch_child` and tell clients to
 *   recurse through department/simplelist; the simulator still honours it.
 * - GET  /cgi-bin/tag/get?tagid=ID — `tagname, userlist, partylist`; "返回列表仅包含应用可见范围的成员" (path/90213).
 * - POST /cgi-bin/user/list_id — "仅支持通过通讯录同步secret调用" (path/96067): an app token always gets 48002.
 * Errcodes: outside the visible range 60011 (documented); an app without contacts permission
 * (`readContacts: false`) 48002 "API接口无权限调用"; unknown department 60003 and unknown tag 40068 (assumed);
 * another app's agentid in agent/get 301002 (assumed).
 */
export type ContactsApi =
  | 'agent/get'
  | 'department/simplelist'
  | 'user/simplelist'
  | 'tag/get'
  | 'user/list_id';

export const CONTACTS_ROUTES: Record<string, ContactsApi> = {
  '/cgi-bin/agent/get': 'agent/get',
  '/cgi-bin/department/simplelist': 'department/simplelist',
  '/cgi-bin/user/simplelist': 'user/simplelist',
  '/cgi-bin/tag/get': 'tag/get',
  '/cgi-bin/user/list_id': 'user/list_id',
};

/** WeCom's party and tag ids are 32-bit integers in its JSON. */
const jsonId = (id: string): number | string => (/^\d+$/.test(id) ? Number(id) : id);
const ok = (extra: Record<string, unknown>): ApiAnswer => apiAnswer(ERRCODE.ok, undefined, extra);

export function answerContacts(
  api: ContactsApi,
  directory: Directory,
  agentId: number,
  query: URLSearchParams,
): ApiAnswer {
  if (api === 'agent/get') return agentGet(directory, agentId, query);
  if (api === 'user/list_id')
    return apiAnswer(ERRCODE.apiForbidden, 'only the contacts sync secret may call');
  if (directory.range(agentId)?.readContacts === false) {
    return apiAnswer(ERRCODE.apiForbidden, 'app may not read contacts');
  }
  if (api === 'department/simplelist') return departmentSimplelist(directory, agentId, query.get('id'));
  if (api === 'user/simplelist') return userSimplelist(directory, agentId, query);
  return tagGet(directory, agentId, query.get('tagid'));
}

function agentGet(directory: Directory, agentId: number, query: URLSearchParams): ApiAnswer {
  const raw = query.get('agentid');
  if (raw === null || raw === '') return apiAnswer(ERRCODE.missingAgentId);
  if (!/^\d+$/.test(raw)) return apiAnswer(ERRCODE.invalidAgentId);
  if (Number(raw) !== agentId) return apiAnswer(ERRCODE.noPrivilegeForApp);
  const range = directory.range(agentId);
  return ok({
    agentid: agentId,
    name: `app ${agentId}`,
    square_logo_url: '',
    description: '',
    allow_userinfos: { user: [...(range?.users ?? [])].map((userid) => ({ userid })) },
    // An app without a configured range sees the whole corp, i.e. the root party.
    allow_partys: { partyid: (range?.parties ?? [ROOT_PARTY]).map(jsonId) },
    allow_tags: { tagid: (range?.tags ?? []).map(jsonId) },
    close: 0,
    redirect_domain: '',
    report_location_flag: 0,
    isreportenter: 0,
    home_url: '',
  });
}

/** Checks an id parameter: a rejection, or undefined when the party exists and the app may see it. */
function checkParty(directory: Directory, agentId: number, raw: string | null): ApiAnswer | undefined {
  if (raw === null || !/^\d+$/.test(raw)) return apiAnswer(ERRCODE.invalidParameter, 'department id');
  if (!directory.allParties().includes(raw)) return apiAnswer(ERRCODE.departmentNotFound);
  if (!directory.partyVisible(agentId, raw)) return apiAnswer(ERRCODE.noContactPrivilege);
  return undefined;
}

function departmentSimplelist(directory: Directory, agentId: number, id: string | null): ApiAnswer {
  let parties: string[];
  if (id === null || id === '') {
    parties = directory.allParties().filter((p) => directory.partyVisible(agentId, p));
  } else {
    const rejected = checkParty(directory, agentId, id);
    if (rejected !== undefined) return rejected;
    parties = directory.partiesReached(id, 'subtree');
  }
  return ok({
    department_id: parties.map((p) => {
      const parent = directory.parentOf(p);
      return { id: jsonId(p), parentid: parent === undefined ? 0 : jsonId(parent), order: 0 };
    }),
  });
}

function userSimplelist(directory: Directory, agentId: number, query: URLSearchParams): ApiAnswer {
  const id = query.get('department_id');
  const rejected = checkParty(directory, agentId, id);
  if (rejected !== undefined) return rejected;
  const reach = query.get('fetch_child') === '1' ? 'subtree' : 'direct';
  const members = [...new Set(directory.membersOfParty(id as string, reach))];
  return ok({
    userlist: members.map((userid) => ({
      userid,
      // Names are not part of the simulated directory; WeCom substitutes the userid where it hides them too.
      name: userid,
      department: directory.partiesOf(userid).map(jsonId),
    })),
  });
}

function tagGet(directory: Directory, agentId: number, tagid: string | null): ApiAnswer {
  if (tagid === null || !/^\d+$/.test(tagid)) return apiAnswer(ERRCODE.invalidParameter, 'tagid');
  if (directory.tags !== undefined && !directory.tags.has(tagid)) return apiAnswer(ERRCODE.invalidTagId);
  const visible = directory.visibleMembers(agentId);
  const users = directory.tagUsers(tagid).filter((u) => visible === undefined || visible.has(u));
  const parties = directory.tagPartyIds(tagid).filter((p) => directory.partyVisible(agentId, p));
  return ok({
    tagname: `tag ${tagid}`,
    userlist: users.map((userid) => ({ userid, name: userid })),
    partylist: parties.map(jsonId),
  });
}
