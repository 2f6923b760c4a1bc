import { afterEach, describe, expect, it } from 'vitest';
import { queueDepth } from '#local/harness/sender.js';
import { maxInRollingWindow } from '#local/harness/windows.js';
import type { ReceivedMessage, WecomSimulator } from '#local/wecom-sim/index.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

/**
 * WeCom's windows are a minute and an hour; here both the gateway and the simulator run on 4-second "minutes" (and
 * 4-minute hours), so a burst that WeCom would spread over minutes plays out in seconds. The logic is the same, only
 * scaled: one member's slots are 4 s ÷ 19 ≈ 210 ms apart on the normal lane, wide enough for a busy machine to keep
 * them in order. The simulator plays the strict readings: every limit counted in rolling windows, userids
 * case-insensitive (it always folds them), parties reaching their sub-parties.
 */
const windows = { minuteMs: 4_000, hourMs: 240_000, dayMs: 86_400_000 };
const runtime = {
  windows: { ...windows, dayOffsetMs: 0 },
  // SQS delays are whole seconds: a copy holding a slot arrives up to this much early and waits the rest itself.
  slotWaitMs: 1_500,
  deferJitterSeconds: 0,
  retry: { baseSeconds: 1, capSeconds: 1 },
};
const strict = { latencyMs: 5, windows, readings: 'strict' as const };

/**
 * The order tests post one message after another (about 0.2 s each here), so they run on 8-second minutes: the
 * burst is then about 40 a minute, over WeCom's 30, and a gateway that counted fixed windows (24 sent on either
 * side of a boundary) or ZhangSan apart from zhangsan would lose some to the simulator's rolling count.
 */
const slowWindows = { minuteMs: 8_000, hourMs: 480_000, dayMs: 86_400_000 };
const inLineOpts = {
  simulator: { ...strict, windows: slowWindows },
  runtime: { ...runtime, windows: { ...slowWindows, dayOffsetMs: 0 } },
};
const high = { priority: 'high' };

const contents = (inbox: ReceivedMessage[]) => inbox.map((m) => (m.payload as { content: string }).content);

/**
 * Posts a message and waits until the sender has given it its slot (sent, or deferred holding it). Slots go in the
 * order messages reach the sender; two that reach two sender containers at the same instant may take each other's
 * place (SQS standard queues keep no order), so the order tests accept each message once the one before it is in
 * line — still a burst far over the member's limit.
 */
async function postInLine(gw: TestGateway, body: unknown): Promise<string> {
  const res = await gw.post('/v1/messages', body);
  expect(res.status).toBe(202);
  await gw.waitForStatus(res.body.id, ['deferred', 'sent'], 30_000);
  return res.body.id;
}

/** The first message of a stack waits for its containers' first token; order is about what comes after that. */
async function warmUp(gw: TestGateway, sim: WecomSimulator) {
  await gw.post('/v1/messages', text('warm-up', 'warm'));
  await waitFor(() => sim.inbox('warm').length === 1);
}

async function delivered(sim: WecomSimulator, user: string, n: number, timeoutMs = 60_000) {
  await waitFor(
    () => sim.inbox(user).length + sim.drops().length >= n,
    timeoutMs,
    () => `${user} has ${sim.inbox(user).length} of ${n}, silent drops ${sim.drops().length}`,
  );
}

describe('quota under the strict readings (rolling windows, case-folded ids)', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stack.stop();
    gw = undefined;
  });
  const simOf = (g: TestGateway): WecomSimulator => {
    if (!g.stack.simulator) throw new Error('no simulator');
    return g.stack.simulator;
  };

  it('delivers a burst of 60 messages to one member without a silent drop, in the order accepted', {
    timeout: 90_000,
  }, async () => {
    gw = await startTestGateway(inLineOpts);
    const sim = simOf(gw);
    await warmUp(gw, sim);
    for (let i = 0; i < 60; i++) await postInLine(gw, text(`burst ${i}`, 'oncall', high));

    await delivered(sim, 'oncall', 60);

    expect(sim.drops()).toEqual([]);
    expect(contents(sim.inbox('oncall'))).toEqual(Array.from({ length: 60 }, (_, i) => `burst ${i}`));
    expect(sim.stats().byErrcode['45009'] ?? 0).toBe(0);
    // What WeCom counted: never more than its 30 in any rolling minute.
    const times = sim.inbox('oncall').map((m) => m.receivedAt);
    expect(maxInRollingWindow(times, slowWindows.minuteMs)).toBeLessThanOrEqual(30);
    expect(await queueDepth(gw.stack, 'high-dlq')).toBe(0);
  });

  it('counts ZhangSan and zhangsan as one member: 40 alternating, no drop, in order', {
    timeout: 90_000,
  }, async () => {
    gw = await startTestGateway(inLineOpts);
    const sim = simOf(gw);
    await warmUp(gw, sim);
    for (let i = 0; i < 40; i++)
      await postInLine(gw, text(`case ${i}`, i % 2 === 0 ? 'ZhangSan' : 'zhangsan', high));

    await delivered(sim, 'zhangsan', 40);

    expect(sim.drops()).toEqual([]);
    expect(contents(sim.inbox('zhangsan'))).toEqual(Array.from({ length: 40 }, (_, i) => `case ${i}`));
  });

  it('loses nothing of 100 messages posted at once to two members, one spelled CaseUser and caseuser', {
    timeout: 90_000,
  }, async () => {
    // The probe: fixed windows let 19 through on either side of a minute boundary, and CaseUser/caseuser
    // got two allowances; the simulator, counting every rolling minute per folded id, dropped 18 of 100.
    gw = await startTestGateway({ simulator: strict, runtime });
    const sim = simOf(gw);
    await warmUp(gw, sim);
    const spelled = (i: number) => (i % 2 === 0 ? 'alice' : i % 4 === 1 ? 'CaseUser' : 'caseuser');
    const res = await gw.post('/v1/messages/batch', {
      messages: Array.from({ length: 100 }, (_, i) => text(`pair ${i}`, spelled(i))),
    });
    expect(res.status).toBe(207);

    await waitFor(
      () => sim.inbox('alice').length + sim.inbox('caseuser').length + sim.drops().length >= 100,
      60_000,
      () => `alice ${sim.inbox('alice').length}, caseuser ${sim.inbox('caseuser').length}`,
    );

    expect(sim.drops()).toEqual([]);
    expect(sim.inbox('alice')).toHaveLength(50);
    expect(sim.inbox('caseuser')).toHaveLength(50);
    expect(sim.stats().byErrcode['45009'] ?? 0).toBe(0);
  });

  it('counts a party broadcast for each member it reaches, next to direct messages to one of them', {
    timeout: 90_000,
  }, async () => {
    gw = await startTestGateway({
      simulator: {
        ...strict,
        // Party 3 sits below party 2: under the strict reading a send to 2 reaches wangwu too.
        directory: {
          partyMembers: { '2': ['zhangsan', 'lisi'], '3': ['wangwu'] },
          partyParents: { '3': '2' },
        },
      },
      runtime,
    });
    const sim = simOf(gw);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      if (i % 10 === 5) {
        const party = await gw.post(
          '/v1/messages',
          text(`party ${i}`, [], { touser: undefined, toparty: '2' }),
        );
        ids.push(party.body.id);
      }
      const res = await gw.post('/v1/messages', text(`direct ${i}`, i % 2 ? 'ZhangSan' : 'wangwu'));
      ids.push(res.body.id);
    }

    for (const id of ids) await gw.waitForStatus(id, ['sent'], 60_000);

    expect(sim.drops()).toEqual([]);
    expect(sim.inbox('zhangsan')).toHaveLength(15 + 3);
    expect(sim.inbox('wangwu')).toHaveLength(15 + 3);
    expect(sim.inbox('lisi')).toHaveLength(3);
    // Membership is read from WeCom once and shared, not per message: 1 tree + 2 member lists for the first send.
    expect(sim.stats().contactsCalls).toBeLessThanOrEqual(3);
  });

  it('shares a configured broadcast allowance with direct messages when the app may not read contacts', {
    timeout: 90_000,
  }, async () => {
    gw = await startTestGateway({
      simulator: strict,
      runtime,
      broadcast: { ops: { partySizes: { '2': 2 }, memberShare: 0.25 } },
    });
    const sim = simOf(gw);
    // The app sees the whole corp (the root party) but may not read its contacts.
    const agentId = String(gw.stack.config.apps.ops?.agentId);
    sim.setDirectory({
      partyMembers: { '2': ['zhangsan', 'lisi'] },
      apps: { [agentId]: { parties: ['1'], readContacts: false } },
    });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const body =
        i % 4 === 0
          ? text(`party ${i}`, [], { touser: undefined, toparty: '2' })
          : text(`direct ${i}`, 'zhangsan');
      ids.push((await gw.post('/v1/messages', body)).body.id);
    }

    for (const id of ids) await gw.waitForStatus(id, ['sent'], 60_000);

    expect(sim.drops()).toEqual([]);
    expect(sim.inbox('zhangsan')).toHaveLength(40);
    expect(sim.stats().byErrcode['48002']).toBeGreaterThan(0); // it tried the contacts API, and was refused
  });

  it('sends a fan-out to everyone with a slot now and to the member at its limit later, as a part of its own', {
    timeout: 90_000,
  }, async () => {
    gw = await startTestGateway({ simulator: strict, runtime });
    const sim = simOf(gw);
    await warmUp(gw, sim);
    const pages = await gw.post('/v1/messages/batch', {
      messages: Array.from({ length: 90 }, (_, i) => text(`page ${i}`, 'oncall')),
    });
    // Every page has its slot (oncall's line now reaches ~19 s ahead: 19 per 4-second minute on the normal lane).
    for (const r of pages.body.results) await gw.waitForStatus(r.id, ['deferred', 'sent'], 30_000);
    const team = Array.from({ length: 100 }, (_, i) => `m${i}`);

    const fanout = await gw.post('/v1/messages', text('all hands', ['m0', 'oncall', ...team.slice(1)]));

    const record = await gw.waitForStatus(fanout.body.id, ['sent'], 60_000);
    await delivered(sim, 'oncall', 91);
    const oncall = sim.inbox('oncall');
    const at = (content: string) => oncall.find((m) => contents([m])[0] === content)?.receivedAt as number;
    // The team had it no later than oncall did, and oncall got it in its turn, after the pages that were in line
    // before it. (Not compared with oncall's pages: on a loaded machine, reserving 101 members' slots can take longer
    // than the 19 s of pages ahead of the fan-out, and then the team's last part and oncall's go out in the same
    // millisecond. A gateway that held the whole message for oncall's slot is caught by the parts below: it would
    // send everyone in one part.)
    const teamGotIt = Math.max(...team.map((m) => sim.inbox(m)[0]?.receivedAt ?? Number.POSITIVE_INFINITY));
    expect(teamGotIt).toBeLessThanOrEqual(at('all hands'));
    expect(at('all hands')).toBeGreaterThan(at('page 80'));
    expect(sim.drops()).toEqual([]);
    // Oncall's part is its own and goes last; the team goes before it, in one part, or in more when reserving its
    // slots took longer than the lateness (members whose slots are further apart may not share a call).
    const parts = record.parts as { touser: string[]; sent_at: string }[];
    expect(parts.at(-1)?.touser).toEqual(['oncall']);
    expect(
      parts
        .slice(0, -1)
        .flatMap((p) => p.touser)
        .sort(),
    ).toEqual([...team].sort());
    const sentAt = parts.map((p) => Date.parse(p.sent_at));
    expect(Math.max(...sentAt.slice(0, -1))).toBeLessThan(sentAt.at(-1) as number);
    expect(record.events.map((e: { type: string }) => e.type)).toContain('part_sent');
  });

  it('keeps app calls within (1 − margin) × perMinute in every rolling window, lets high pass a normal backlog, and shows the windows in GET /v1/apps', {
    timeout: 90_000,
  }, async () => {
    // perMinute 20 → the gateway allows 16 calls per window; normal may use 80% of that (12), high all 16. The
    // simulator enforces the same 20 per rolling window as WeCom might: one call over → 45009.
    gw = await startTestGateway({
      simulator: { ...strict, limits: { perAppPerMinute: 20 } },
      runtime,
      quota: { perMinute: 20 },
    });
    const sim = simOf(gw);
    const normal = await gw.post('/v1/messages/batch', {
      messages: Array.from({ length: 60 }, (_, i) => text(`normal ${i}`, `n${i}`)),
    });
    expect(normal.status).toBe(207);
    for (let i = 0; i < 4; i++)
      await gw.post('/v1/messages', text(`ALERT ${i}`, `h${i}`, { priority: 'high' }));

    await waitFor(() => [0, 1, 2, 3].every((i) => sim.inbox(`h${i}`).length === 1), 30_000);
    const normalDone = Array.from({ length: 60 }, (_, i) => sim.inbox(`n${i}`).length).reduce(
      (a, b) => a + b,
    );
    // High priority went ahead: the normal backlog was still far from done when every alert had arrived.
    expect(normalDone).toBeLessThan(60);

    await waitFor(
      () => Array.from({ length: 60 }, (_, i) => sim.inbox(`n${i}`).length).every((n) => n === 1),
      60_000,
    );
    const calls = sim.requests().filter((r) => r.path.includes('message/send') && r.errcode === 0);
    expect(
      maxInRollingWindow(
        calls.map((r) => r.at),
        windows.minuteMs,
      ),
    ).toBeLessThanOrEqual(20);
    expect(sim.stats().byErrcode['45009'] ?? 0).toBe(0);

    // GET /v1/apps/{app} reads the senders' rolling windows from the quota item they wrote.
    const view = (await gw.get('/v1/apps/ops')).body;
    const now = Date.now();
    expect(
      view.quota.map((q: { window: string; limit: number; allowed: number }) => [
        q.window,
        q.limit,
        q.allowed,
      ]),
    ).toEqual([
      ['app-minute', 20, 16],
      ['app-hour', 150_000, 120_000],
      ['app-day', 100_000, 80_000],
    ]);
    const [minute, hour, day] = view.quota;
    expect(minute.used).toBeLessThanOrEqual(16);
    expect(hour.used).toBeGreaterThanOrEqual(64);
    expect(day.used).toBeGreaterThanOrEqual(64);
    // The 4-second minute rolls: what it counts leaves it within a window of the last call's slot.
    expect(Date.parse(minute.resets_at)).toBeLessThanOrEqual(now + windows.minuteMs + 1_000);
    expect(Date.parse(hour.resets_at)).toBeGreaterThan(now);
  });
});
