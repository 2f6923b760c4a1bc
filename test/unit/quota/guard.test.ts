import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS, type QuotaConfig } from '#lib/config/index.js';
import { type QuotaDemand, QuotaGuard, type SendDecision, type WaitDecision } from '#lib/quota/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryQuotaStore } from '#test/helpers/unit-quota-store.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const quota = (overrides: Partial<QuotaConfig> = {}): QuotaConfig => ({ ...QUOTA_DEFAULTS, ...overrides });
const demand = (overrides: Partial<QuotaDemand> = {}): QuotaDemand => ({
  app: 'ops',
  quota: quota(),
  priority: 'high',
  members: ['zhangsan'],
  splittable: true,
  extraPersonTimes: 0,
  broadcasts: 0,
  broadcastShare: 0,
  ...overrides,
});
type Ok = SendDecision;
type Refused = WaitDecision;

function guard(store = new InMemoryQuotaStore(), clock = fakeClock(START)) {
  return { store, clock, guard: new QuotaGuard(store, { now: clock.now, sleep: clock.sleep }) };
}

/** Fills a member's minute: high messages one after the other until one is not due within the in-process wait. */
async function busy(g: QuotaGuard, member: string) {
  for (let i = 0; i < 100; i++) {
    const d = await g.reserve(demand({ members: [member] }));
    if (d.kind === 'wait') return d;
  }
  throw new Error('never busy');
}

describe('QuotaGuard', () => {
  it('hands one member’s slots out in arrival order, a pace apart, and holds the later ones', async () => {
    const { guard: g } = guard();

    const decisions = await Promise.all(
      Array.from({ length: 6 }, () => g.reserve(demand({ priority: 'normal' }))),
    );

    // Normal: 19 a minute → a slot every 3.16 s; 0 s and 3.16 s are due within the 4 s wait, the others are held.
    const [first, second, ...later] = decisions;
    expect(first).toMatchObject({ kind: 'send', sendAtMs: START, members: ['zhangsan'] });
    expect(second).toMatchObject({ kind: 'send', members: ['zhangsan'] });
    expect(((second as Ok).sendAtMs - START) / 1000).toBeCloseTo(60 / 19, 2);
    const slots = later.map((d) => (d as Refused).held?.members?.zhangsan as number);
    expect(later.every((d) => d.kind === 'wait' && d.scope === 'member-minute')).toBe(true);
    expect(slots).toEqual([...slots].sort((a, b) => a - b));
    for (const [i, s] of slots.entries()) expect(s - START).toBeCloseTo(((i + 2) * 60_000) / 19, 0);
  });

  it('sends a fan-out to the members with a slot now and holds the slot of the one at its limit', async () => {
    const { guard: g } = guard();
    const refusal = await busy(g, 'oncall');

    const d = (await g.reserve(demand({ members: ['a', 'oncall', 'b'] }))) as Ok;

    expect(d.kind).toBe('send');
    expect(d.members).toEqual(['a', 'b']);
    expect(d.rest?.members).toEqual(['oncall']);
    // The slot after the one the refused message holds: the fan-out's part waits in line, exactly.
    expect(d.rest?.wakeAtMs).toBeGreaterThan(refusal.held?.members?.oncall as number);
    expect(d.rest?.held).toEqual({ members: { oncall: d.rest?.wakeAtMs } });
  });

  it('uses a held slot when the copy comes back for it, without reserving again', async () => {
    const { guard: g, store, clock } = guard();
    const refusal = await busy(g, 'oncall');
    const requests = store.total();
    clock.advance((refusal.held?.members?.oncall as number) - clock.now() - 500);

    const d = (await g.reserve(demand({ members: ['oncall'], held: refusal.held }))) as Ok;

    expect(d).toMatchObject({ kind: 'send', sendAtMs: refusal.held?.members?.oncall, members: ['oncall'] });
    expect(store.calls.reserve - (requests - store.calls.read)).toBeLessThanOrEqual(1); // the app block only
  });

  it('reserves again for a held slot that has passed by more than the margin absorbs', async () => {
    const { guard: g, clock } = guard();
    const refusal = await busy(g, 'oncall');
    clock.advance((refusal.held?.members?.oncall as number) - clock.now() + 60_000);

    const d = (await g.reserve(demand({ members: ['oncall'], held: refusal.held }))) as Ok;

    expect(d.kind).toBe('send');
    expect(d.sendAtMs).toBeGreaterThan(refusal.held?.members?.oncall as number);
  });

  it('sends a broadcast to everyone at once, at the slot of its busiest member', async () => {
    const { guard: g } = guard();
    const refusal = await busy(g, 'oncall');

    const d = (await g.reserve(demand({ members: ['a', 'oncall', 'b'], splittable: false }))) as Refused;

    expect(d.kind).toBe('wait');
    const at = d.retryAtMs;
    expect(at).toBeGreaterThan(refusal.held?.members?.oncall as number);
    expect(d.held).toEqual({ members: { a: at, oncall: at, b: at } });
  });

  it('charges broadcasts of configured size to the shared allowance, which every member’s allowance gives up', async () => {
    const { guard: g, store } = guard();
    const share = {
      broadcastShare: 0.25,
      splittable: false,
      members: [],
      broadcasts: 1,
      extraPersonTimes: 500,
    };

    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await g.reserve(demand(share)));

    // A quarter of 30 a minute is 7 → ⌊7 × 0.8⌋ = 5 broadcasts a minute: 4 paced 15 s apart that normal may use,
    // 1 more for high. High takes both at once (a millisecond apart, to keep their order), then waits 15 s.
    expect(decisions[0]).toMatchObject({ kind: 'send', sendAtMs: START });
    expect(decisions[1]).toMatchObject({ kind: 'send', sendAtMs: START + 1 });
    expect((decisions[2] as Refused).held?.broadcastMs).toBe(START + 15_000);
    const key = { app: 'ops', kind: 'broadcast' } as const;
    expect(store.pool(key, 'b', 'n').cum + store.pool(key, 'b', 'h').cum).toBe(3);
    expect(store.pool({ app: 'ops', kind: 'app' }, 'd', 'n').cum).toBeGreaterThanOrEqual(500);
  });

  it('reserves the app’s calls in blocks: a batch of 10 messages costs about one request each', async () => {
    const { guard: g, store } = guard();

    await Promise.all(Array.from({ length: 10 }, (_, i) => g.reserve(demand({ members: [`m${i}`] }))));
    const batch = store.total();
    await Promise.all(Array.from({ length: 10 }, (_, i) => g.reserve(demand({ members: [`n${i}`] }))));

    // 10 member reservations (blind: new members, one request each) and the app item in one or two blocks.
    expect(store.total() - batch).toBeLessThanOrEqual(12);
  });

  it('never allows a send its app block has not counted, when another container moved the pace meanwhile', async () => {
    const store = new InMemoryQuotaStore();
    // At the start of an hour bucket (4 s with these windows), so appends stay in it.
    const clock = fakeClock(Date.parse('2026-12-01T08:00:08Z'));
    const windows = { minuteMs: 4_000, hourMs: 240_000, dayMs: 86_400_000, dayOffsetMs: 0 };
    const q = quota({ perMinute: 50 });
    const [a, b] = [0, 1].map(() => new QuotaGuard(store, { windows, now: clock.now, sleep: clock.sleep }));
    const send = (g: QuotaGuard | undefined, member: string) =>
      (g as QuotaGuard).reserve(demand({ quota: q, priority: 'normal', members: [member] }));

    const decisions = [await send(a, 'a1')];
    // Container b books the app's calls 25 deep (a block for a full batch); a still thinks the pace is idle.
    decisions.push(...(await Promise.all(Array.from({ length: 25 }, (_, i) => send(b, `b${i}`)))));
    const a2 = await send(a, 'a2');
    clock.advance(3_300); // when the call a's new block holds comes due
    const a3 = await send(a, 'a3');
    decisions.push(a2, a3, await send(a, 'a4'));

    // a's call came back granted behind b's 25 calls, within the inline wait: a2 goes then (its member's slot moved
    // to it), never at once and unaccounted; a3 comes after it.
    expect(a2).toMatchObject({ kind: 'send' });
    expect((a2 as Ok).sendAtMs).toBeGreaterThan(clock.now() - 3_300 + 3_000);
    expect(a3).toMatchObject({ kind: 'send' });
    expect((a3 as Ok).sendAtMs).toBeGreaterThan((a2 as Ok).sendAtMs);

    const sent = decisions.filter((d) => d.kind === 'send').length;
    const reserved = (counter: string) =>
      (['n', 'h'] as const).reduce(
        (n, pool) => n + store.pool({ app: 'ops', kind: 'app' }, counter, pool).cum,
        0,
      );
    expect(reserved('c')).toBeGreaterThanOrEqual(sent);
    expect(reserved('d')).toBeGreaterThanOrEqual(sent);
  });

  it('holds the app’s next call for a copy its calls are taken for beyond the wait, and sends on it once back', async () => {
    const { guard: g, store, clock } = guard();
    const q = quota({ perMinute: 50 });
    const calls = () =>
      (['n', 'h'] as const).reduce(
        (n, pool) => n + store.pool({ app: 'ops', kind: 'app' }, 'c', pool).cum,
        0,
      );
    const refusals: Refused[] = [];
    const chargedForRefusals: number[] = [];
    for (let i = 0; i < 200 && refusals.length < 3; i++) {
      const before = calls();
      const d = await g.reserve(demand({ quota: q, members: [`m${i}`] }));
      if (d.kind === 'wait') {
        refusals.push(d);
        chargedForRefusals.push(calls() - before);
      }
    }
    const [first, second, third] = refusals as [Refused, Refused, Refused];
    const callOf = (r: Refused) => r.held?.call;

    // Each copy holds its own call (with its person-times), in arrival order, and wakes for it exactly: before,
    // copies came back to look again and found the app's line idle in between.
    expect(first).toMatchObject({ kind: 'wait', scope: 'app-minute' });
    expect(callOf(first)).toEqual({ slotMs: first.retryAtMs, personTimes: 1 });
    expect(first.retryAtMs).toBeGreaterThan(clock.now() + g.inlineWaitMs);
    expect(callOf(second)?.slotMs).toBeGreaterThanOrEqual(first.retryAtMs);
    expect(callOf(third)?.slotMs).toBeGreaterThanOrEqual(callOf(second)?.slotMs as number); // high: two pools
    expect(chargedForRefusals).toEqual([1, 1, 1]);

    // Back a little early: it sends on its call, and the app's line is not charged again.
    const charged = calls();
    clock.advance(first.retryAtMs - clock.now() - 500);
    const back = await g.reserve(demand({ quota: q, members: ['m0-back'], held: first.held }));
    expect(back).toMatchObject({ kind: 'send', sendAtMs: first.retryAtMs, members: ['m0-back'] });
    expect(calls()).toBe(charged);

    // Back long after its call: the call has lapsed (a call used late could crowd WeCom's minute); it takes another.
    clock.advance(60_000);
    const late = await g.reserve(demand({ quota: q, members: ['m1-back'], held: second.held }));
    expect(late.kind).toBe('send');
    expect((late as Ok).sendAtMs).toBeGreaterThan(callOf(second)?.slotMs as number);
    expect(calls()).toBeGreaterThan(charged);
  });

  it('sends on a held call no earlier than its member’s slot, when the copy comes back a little after the call', async () => {
    const { guard: g, store, clock } = guard();
    const q = quota({ perMinute: 50 });
    let held: Refused | undefined;
    for (let i = 0; i < 200 && !held; i++) {
      const d = await g.reserve(demand({ quota: q, members: [`m${i}`] }));
      if (d.kind === 'wait') held = d;
    }
    const call = held?.held?.call;
    expect(call).toBeDefined();

    // Picked up 300 ms after its call (within the lateness): the call is still used, but the member's slot is now.
    clock.advance((call?.slotMs as number) + 300 - clock.now());
    const back = await g.reserve(demand({ quota: q, members: ['late'], held: held?.held }));
    const slot = store.granted.find((x) => x.key.includes('late'));

    expect(back.kind).toBe('send');
    expect(slot).toBeDefined();
    expect((back as Ok).sendAtMs).toBe(clock.now());
  });

  it('lets normal copies hold the shared calls only a few inline waits ahead, so high can take them again soon', async () => {
    const { guard: g, clock } = guard();
    const q = quota({ perMinute: 50 });
    const start = clock.now();
    let unheld: Refused | undefined;
    const heldCalls: number[] = [];
    for (let i = 0; i < 200 && !unheld; i++) {
      const d = await g.reserve(demand({ quota: q, priority: 'normal', members: [`n${i}`] }));
      if (d.kind !== 'wait') continue;
      const call = d.held?.call;
      if (call) heldCalls.push(call.slotMs);
      else unheld = d;
    }

    // Normal: 32 a minute, 1.875 s apart; held up to 4 × 4 s ahead, then the copy holds nothing and wakes later.
    expect(heldCalls.length).toBeGreaterThan(3);
    expect(Math.max(...heldCalls)).toBeLessThanOrEqual(start + 4 * g.inlineWaitMs);
    expect(unheld).toMatchObject({ kind: 'wait', scope: 'app-minute' });
    // It comes back while the held calls still last (not when its own call would come, the line idle by then).
    expect(unheld?.retryAtMs).toBeGreaterThan(clock.now());
    expect(unheld?.retryAtMs).toBeLessThan(Math.max(...heldCalls));
    // High still holds its calls further ahead (its own pool, then the shared one).
    let high: Refused | undefined;
    for (let i = 0; i < 200 && !high; i++) {
      const d = await g.reserve(demand({ quota: q, members: [`h${i}`] }));
      if (d.kind === 'wait') high = d;
    }
    const highCall = high?.held?.call;
    expect(highCall?.slotMs).toBeGreaterThan(clock.now() + g.inlineWaitMs);
  });

  it('holds a fresh copy’s call at once behind the held ones, reserving its members only when it comes back', async () => {
    const { guard: g, store, clock } = guard();
    const q = quota({ perMinute: 50 });
    let first: Refused | undefined;
    for (let i = 0; i < 200 && !first; i++) {
      const d = await g.reserve(demand({ quota: q, members: [`m${i}`] }));
      if (d.kind === 'wait') first = d;
    }
    const grantedFor = (member: string) => store.granted.filter((x) => x.key.includes(member)).length;

    const fresh = (await g.reserve(demand({ quota: q, members: ['fresh'] }))) as Refused;

    // Its call comes after the first held one, and nothing was reserved for its member (it would lapse unused).
    expect(fresh).toMatchObject({ kind: 'wait', scope: 'app-minute' });
    expect(fresh.held).toEqual({ call: { slotMs: fresh.retryAtMs, personTimes: 1 } });
    expect(fresh.retryAtMs).toBeGreaterThanOrEqual(first?.retryAtMs as number);
    expect(grantedFor('fresh')).toBe(0);
    // A member this container reserved for before goes the long way: it may be busy itself.
    const seen = (await g.reserve(demand({ quota: q, members: ['m0'] }))) as Refused;
    expect(seen.kind).toBe('wait');
    expect(grantedFor('m0')).toBe(2);
    // Back for its call: the member's slot is taken then, at the call.
    clock.advance(fresh.retryAtMs - clock.now() - 500);
    const back = await g.reserve(demand({ quota: q, members: ['fresh'], held: fresh.held }));
    expect(back).toMatchObject({ kind: 'send', sendAtMs: fresh.retryAtMs, members: ['fresh'] });
    expect(grantedFor('fresh')).toBe(1);
  });

  it('fails for good only what no window can hold', async () => {
    const { guard: g } = guard();

    const d = await g.reserve(
      demand({ quota: quota({ perDay: 10 }), members: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] }),
    );

    expect(d).toEqual({ kind: 'never', scope: 'app-day' });
  });

  it('keeps normal to its share of the app minute, and high is never queued behind it', async () => {
    const { guard: g, clock } = guard();
    const q = quota({ perMinute: 100 });
    const normal: Ok[] = [];
    let refusal: Refused | undefined;
    for (let i = 0; i < 200 && !refusal; i++) {
      const d = await g.reserve(demand({ quota: q, priority: 'normal', members: [`n${i}`] }));
      if (d.kind === 'send') normal.push(d);
      else if (d.kind === 'wait') refusal = d;
    }

    const high = await g.reserve(demand({ quota: q, priority: 'high', members: ['h0'] }));

    // Normal: 64 a minute, paced 937.5 ms apart; the app is full for it a little later, not for high.
    expect(refusal).toMatchObject({ kind: 'wait', scope: 'app-minute' });
    expect(normal.length).toBeGreaterThan(1);
    for (const [i, d] of normal.entries()) expect(d.sendAtMs).toBeGreaterThanOrEqual(START + i * 937.5);
    expect(high).toMatchObject({ kind: 'send' });
    expect((high as Ok).sendAtMs).toBeLessThanOrEqual(clock.now() + 1);
  });
});
