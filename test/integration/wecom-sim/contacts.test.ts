import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SimDirectory, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  APP,
  getApi,
  getToken,
  OTHER_APP,
  type SimAnswer,
  startTestSimulator,
} from '#test/helpers/sim-fixtures.js';

const DIRECTORY: SimDirectory = {
  users: ['alice', 'bob', 'carol', 'dave', 'erin'],
  parties: ['1', '2', '3', '4'],
  tags: ['7', '8'],
  partyMembers: { '2': ['alice', 'bob'], '3': ['dave'], '4': ['erin'] },
  partyParents: { '3': '2' },
  tagMembers: { '7': ['carol', 'erin'] },
  tagParties: { '7': ['2', '4'] },
  apps: {
    // The test app sees party 2 (and 3 below it), carol and tag 8 (nobody); the other app may not read contacts.
    [String(APP.agentId)]: { parties: ['2'], tags: ['8'], users: ['carol'] },
    [String(OTHER_APP.agentId)]: { parties: ['1'], readContacts: false },
  },
};

describe('WeCom simulator › contacts reads', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeAll(async () => {
    sim = await startTestSimulator({ directory: DIRECTORY });
  });
  beforeEach(async () => {
    sim.reset();
    token = await getToken(sim);
  });
  afterAll(async () => {
    await sim.stop();
  });

  const get = (api: string, params: Record<string, string>, t = token): Promise<SimAnswer> =>
    getApi(sim, api, t, params);

  it("answers agent/get with the app's visible range", async () => {
    expect(await get('agent/get', { agentid: String(APP.agentId) })).toMatchObject({
      errcode: 0,
      agentid: APP.agentId,
      allow_userinfos: { user: [{ userid: 'carol' }] },
      allow_partys: { partyid: [2] },
      allow_tags: { tagid: [8] },
      close: 0,
    });
  });

  it("answers agent/get for another app's agentid with 301002, and 41011 without one", async () => {
    expect((await get('agent/get', { agentid: String(OTHER_APP.agentId) })).errcode).toBe(301002);
    expect((await get('agent/get', {})).errcode).toBe(41011);
  });

  it('lists a party and the parties below it with department/simplelist', async () => {
    expect(await get('department/simplelist', { id: '2' })).toMatchObject({
      errcode: 0,
      department_id: [
        { id: 2, parentid: 1, order: 0 },
        { id: 3, parentid: 2, order: 0 },
      ],
    });
    const all = await get('department/simplelist', {});
    expect((all.department_id as { id: number }[]).map((d) => d.id).sort()).toEqual([2, 3]);
  });

  it("lists a party's members with user/simplelist, and the sub-parties' members with fetch_child=1", async () => {
    expect(await get('user/simplelist', { department_id: '2' })).toMatchObject({
      errcode: 0,
      userlist: [
        { userid: 'alice', name: 'alice', department: [2] },
        { userid: 'bob', name: 'bob', department: [2] },
      ],
    });
    const deep = await get('user/simplelist', { department_id: '2', fetch_child: '1' });
    expect((deep.userlist as { userid: string }[]).map((u) => u.userid)).toEqual(['alice', 'bob', 'dave']);
  });

  it('answers tag/get with the members and parties the app may see', async () => {
    expect(await get('tag/get', { tagid: '7' })).toEqual(
      expect.objectContaining({
        errcode: 0,
        tagname: 'tag 7',
        // erin is in the tag, but outside the app's range; so is party 4.
        userlist: [{ userid: 'carol', name: 'carol' }],
        partylist: [2],
      }),
    );
  });

  it('answers 60011 outside the visible range, 60003 for an unknown party, 40068 for an unknown tag', async () => {
    expect((await get('user/simplelist', { department_id: '4' })).errcode).toBe(60011);
    expect((await get('department/simplelist', { id: '1' })).errcode).toBe(60011);
    expect((await get('user/simplelist', { department_id: '99' })).errcode).toBe(60003);
    expect((await get('user/simplelist', {})).errcode).toBe(40035);
    expect((await get('tag/get', { tagid: '9' })).errcode).toBe(40068);
  });

  it('answers 48002 to an app without contacts permission, which still reads its own range', async () => {
    const other = await getToken(sim, OTHER_APP);

    expect((await get('user/simplelist', { department_id: '2' }, other)).errcode).toBe(48002);
    expect((await get('department/simplelist', {}, other)).errcode).toBe(48002);
    expect((await get('tag/get', { tagid: '7' }, other)).errcode).toBe(48002);
    expect((await get('agent/get', { agentid: String(OTHER_APP.agentId) }, other)).errcode).toBe(0);
  });

  it('answers 48002 to user/list_id, which only the contacts sync secret may call', async () => {
    expect((await postApiPath('user/list_id', { limit: 100 })).errcode).toBe(48002);
  });

  it('authenticates like every API, counts contacts calls, and takes faults on the contacts path', async () => {
    expect((await get('tag/get', { tagid: '7' }, 'made-up')).errcode).toBe(40014);
    sim.faults.script([{ errcode: -1 }], { path: 'contacts' });
    expect((await get('tag/get', { tagid: '7' })).errcode).toBe(-1);
    expect(sim.stats().contactsCalls).toBe(2);
  });

  async function postApiPath(api: string, body: unknown): Promise<SimAnswer> {
    const res = await fetch(`${sim.url}/cgi-bin/${api}?access_token=${encodeURIComponent(token)}`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    return (await res.json()) as SimAnswer;
  }
});

describe('WeCom simulator › contacts reads without a visible range', () => {
  it('answers the root party as the visible range of an app that sees the whole corp', async () => {
    const sim = await startTestSimulator({ directory: { users: ['alice'] } });
    try {
      const answer = await getApi(sim, 'agent/get', await getToken(sim), { agentid: String(APP.agentId) });

      expect(answer).toMatchObject({
        errcode: 0,
        allow_userinfos: { user: [] },
        allow_partys: { partyid: [1] },
        allow_tags: { tagid: [] },
      });
    } finally {
      await sim.stop();
    }
  });
});
