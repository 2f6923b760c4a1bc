import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SimDirectory, SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  inspect,
  manualClock,
  send,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

/** Party 2 (alice, bob) with sub-party 3 (dave); tag 7 holds carol and party 2; erin and frank hold no party. */
const DIRECTORY: SimDirectory = {
  users: ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'],
  parties: ['1', '2', '3'],
  tags: ['7'],
  partyMembers: { '2': ['alice', 'bob'], '3': ['dave'] },
  partyParents: { '2': '1', '3': '2' },
  tagMembers: { '7': ['carol'] },
  tagParties: { '7': ['2'] },
};
const received = (sim: WecomSimulator, users: string[]) => users.map((u) => sim.inbox(u).length);

describe('WeCom simulator › userids are case-insensitive', () => {
  // A stopped clock: a minute boundary in the middle of the sends would hide drops.
  const clock = manualClock();
  let sim: WecomSimulator;
  let token: string;
  beforeEach(async () => {
    sim = await startTestSimulator({ clock: clock.now });
    token = await getToken(sim);
  });
  afterEach(async () => {
    await sim.stop();
  });

  it('counts CaseUser and caseuser as one member, with one inbox and one set of limits', async () => {
    for (let i = 0; i < 40; i++)
      await send(sim, token, textMessage({ touser: i % 2 ? 'CaseUser' : 'caseuser' }));

    expect(sim.inbox('caseuser')).toHaveLength(30);
    expect(sim.inbox('CASEUSER')).toHaveLength(30);
    expect(sim.drops()).toHaveLength(10);
    expect(new Set(sim.drops().map((d) => d.userId))).toEqual(new Set(['caseuser']));
  });

  it('delivers once and charges one person-time when both spellings are in one send', async () => {
    await send(sim, token, textMessage({ touser: 'CaseUser|caseuser|CASEUSER' }));

    expect(sim.inbox('caseuser')).toHaveLength(1);
    expect(sim.stats().delivered).toBe(1);
  });
});

describe('WeCom simulator › broadcasts count per member reached', () => {
  let sim: WecomSimulator;
  let token: string;
  const clock = manualClock();
  const start = async (overrides: Partial<SimulatorOptions> = {}) => {
    sim = await startTestSimulator({ clock: clock.now, directory: DIRECTORY, ...overrides });
    token = await getToken(sim);
  };
  afterEach(async () => {
    await sim.stop();
  });

  it('drops a party send silently for a member already at their limit, and delivers to the others', async () => {
    await start({ limits: { perMemberPerMinute: 2 } });
    await send(sim, token, textMessage({ touser: 'Alice' }));
    await send(sim, token, textMessage({ touser: 'alice' }));

    expect((await send(sim, token, textMessage({ touser: undefined, toparty: '2' }))).errcode).toBe(0);

    expect(received(sim, ['alice', 'bob'])).toEqual([2, 1]);
    expect(sim.drops()).toEqual([expect.objectContaining({ userId: 'alice', reason: 'member_minute' })]);
  });

  it('brings a member reached through a party to their limit for later direct sends', async () => {
    await start({ limits: { perMemberPerMinute: 1 } });
    await send(sim, token, textMessage({ touser: undefined, totag: '7' }));

    await send(sim, token, textMessage({ touser: 'bob' }));

    expect(sim.drops()).toEqual([expect.objectContaining({ userId: 'bob' })]);
  });

  it("reaches a tag's members and its parties' members", async () => {
    // Their own members: sub-parties are the next test's.
    await start({ readings: { partyReach: 'direct' } });
    await send(sim, token, textMessage({ touser: undefined, totag: '7' }));

    expect(received(sim, ['alice', 'bob', 'carol', 'dave'])).toEqual([1, 1, 1, 0]);
  });

  it("reaches sub-parties only under the 'subtree' reading", async () => {
    await start({ readings: { partyReach: 'direct' } });
    await send(sim, token, textMessage({ touser: undefined, toparty: '2' }));
    expect(received(sim, ['alice', 'bob', 'dave'])).toEqual([1, 1, 0]);

    sim.setReadings({ partyReach: 'subtree' });
    await send(sim, token, textMessage({ touser: undefined, toparty: '2' }));
    expect(received(sim, ['alice', 'bob', 'dave'])).toEqual([2, 2, 1]);
    // Every party hangs under the root party, so a send to 1 reaches every party member.
    await send(sim, token, textMessage({ touser: undefined, toparty: '1' }));
    expect(received(sim, ['alice', 'dave', 'erin'])).toEqual([3, 2, 0]);
  });

  it("charges the day's person-times per member reached, not per party", async () => {
    const many = Array.from({ length: 150 }, (_, i) => `m${i}`);
    await start({ seats: 1, directory: { partyMembers: { '5': many } } });

    expect((await send(sim, token, textMessage({ touser: undefined, toparty: '5' }))).errcode).toBe(0);
    expect((await send(sim, token, textMessage({ touser: undefined, toparty: '5' }))).errcode).toBe(45009);
    expect(sim.stats().delivered).toBe(150);
  });

  it("limits sends and @all to the app's visible range", async () => {
    await start({
      directory: {
        ...DIRECTORY,
        apps: { '1000002': { parties: ['2'], users: ['Erin'], readContacts: true } },
      },
    });

    await send(sim, token, textMessage({ touser: '@all' }));
    expect(received(sim, ['alice', 'bob', 'dave', 'erin', 'carol', 'frank'])).toEqual([1, 1, 1, 1, 0, 0]);
    expect(sim.stats().delivered).toBe(4);

    expect(await send(sim, token, textMessage({ touser: 'frank|ERIN', toparty: '1|3' }))).toMatchObject({
      errcode: 0,
      invaliduser: 'frank',
      invalidparty: '1',
    });
    expect(await send(sim, token, textMessage({ touser: 'frank' }))).toMatchObject({
      errcode: 81013,
      invaliduser: 'frank',
    });
  });

  it('sets and reads the directory at runtime over HTTP, with numeric ids as in WeCom, and rejects bad ones', async () => {
    await start({ directory: undefined });

    const set = await inspect(sim, 'directory', {
      users: ['zoe'],
      partyMembers: { 9: ['Zoe'] },
      parties: [9],
    });
    expect(set).toEqual({
      status: 200,
      body: { users: ['zoe'], parties: ['9'], partyMembers: { '9': ['Zoe'] } },
    });
    expect((await inspect(sim, 'directory')).body).toEqual(set.body);
    await send(sim, token, textMessage({ touser: undefined, toparty: '9' }));
    expect(sim.inbox('zoe')).toHaveLength(1);
    expect((await send(sim, token, textMessage({ touser: 'alice' }))).errcode).toBe(81013);

    const bad = await inspect(sim, 'directory', { partyMembers: { 9: 'zoe' } });
    expect(bad.status).toBe(400);
    expect((await inspect(sim, 'directory', { members: [] })).body).toMatchObject({
      code: 'SIM_INSPECTION_BAD_REQUEST',
    });
  });
});
