import { describe, expect, it } from 'vitest';
import { encodeQueuedMessage, type QueuedMessage, type RecordFields, STATUS } from '#lib/model/index.js';
import { type DlqDeps, listDeadLetters, redriveDeadLetters } from '#lib/ops/dlq.js';
import type { DeadLetter, DeadLetterQueue } from '#lib/queue/index.js';
import type { LaneName } from '#lib/resources/index.js';
import { processBatch } from '#lib/sender/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:00Z');

/** A DLQ in memory with SQS's visibility rules: a received message is hidden, never removed, until deleted. */
class FakeDeadLetters implements DeadLetterQueue {
  readonly messages: (DeadLetter & { lane: LaneName; hiddenUntil: number })[] = [];
  private handles = 0;
  readonly deleted: string[] = [];
  constructor(private readonly now: () => number) {}
  put(lane: LaneName, body: QueuedMessage | string, sentAtMs: number) {
    const id = `sqs-${this.messages.length + this.deleted.length + 1}`;
    const text = typeof body === 'string' ? body : encodeQueuedMessage(body);
    this.messages.push({
      lane,
      messageId: id,
      receiptHandle: '',
      body: text,
      sentAtMs,
      receiveCount: 6,
      hiddenUntil: 0,
    });
  }
  visible(lane: LaneName) {
    return this.messages.filter((m) => m.lane === lane && m.hiddenUntil <= this.now());
  }
  async receive(lane: LaneName, max: number, hideSeconds: number) {
    return this.visible(lane)
      .slice(0, max)
      .map((m) => {
        m.receiptHandle = `rh-${++this.handles}`;
        m.hiddenUntil = this.now() + hideSeconds * 1000;
        m.receiveCount = (m.receiveCount ?? 0) + 1;
        const { lane: _l, hiddenUntil: _h, ...letter } = m;
        return { ...letter };
      });
  }
  async release(_lane: LaneName, handles: readonly string[]) {
    for (const m of this.messages) if (handles.includes(m.receiptHandle)) m.hiddenUntil = 0;
  }
  async delete(_lane: LaneName, handle: string) {
    const i = this.messages.findIndex((m) => m.receiptHandle === handle);
    if (i >= 0) this.deleted.push(...this.messages.splice(i, 1).map((m) => m.messageId));
  }
}

function setup() {
  const clock = fakeClock(START);
  const h = senderHarness(clock.now);
  const dlq = new FakeDeadLetters(clock.now);
  const deps: DlqDeps = { deadLetters: dlq, lanes: h.lanes, messages: h.store, now: clock.now };
  /** A message the sender crashed on 6 times: its body in the DLQ, its record still as it was. */
  const crashed = async (id: string, record: Partial<RecordFields> = {}, generation = 0) => {
    const m = queued(id, START);
    await h.store.create({ ...m.record, generation, ...record });
    dlq.put('normal', m.body(generation), START);
    return m;
  };
  return { clock, h, dlq, deps, crashed };
}

describe('dlq list', () => {
  it('shows a message whose current copy died and makes its record dead; deletes nothing', async () => {
    const { clock, h, dlq, deps, crashed } = setup();
    await crashed('msg_crash');
    clock.advance(600_000);

    const views = await listDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(views).toEqual([
      expect.objectContaining({
        id: 'msg_crash',
        app: 'ops',
        state: 'dead',
        status: STATUS.dead,
        reconciled: true,
        attempts: 0,
        ageSeconds: 600,
        lastError: 'none recorded (the sender stopped without an answer)',
      }),
    ]);
    expect(h.store.record('msg_crash')).toMatchObject({
      status: STATUS.dead,
      error: { code: 'dead_lettered' },
    });
    expect(h.store.record('msg_crash')?.events?.at(-1)).toMatchObject({ type: 'dead' });
    expect(dlq.deleted).toEqual([]);
    expect(dlq.visible('normal')).toHaveLength(1);
  });

  it('leaves alone a record that ended otherwise, one a newer copy owns, and a body it cannot read', async () => {
    const { h, dlq, deps, crashed } = setup();
    await crashed('msg_sent', { status: STATUS.sent });
    await crashed('msg_stale', { generation: 2, status: STATUS.deferred });
    await crashed('msg_failing', { events: [{ at: 'x', type: 'retry', detail: 'errcode -1' }] });
    dlq.put('normal', '{"not":"a body"}', START);
    dlq.put('normal', encodeQueuedMessage(queued('msg_gone', START).body()), START);

    const views = await listDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(views.map((v) => [v.id, v.state, v.status, v.reconciled])).toEqual([
      ['msg_sent', 'handled', 'sent', false],
      ['msg_stale', 'superseded', 'deferred', false],
      ['msg_failing', 'dead', 'dead', true],
      [undefined, 'unknown', undefined, false],
      ['msg_gone', 'unknown', undefined, false],
    ]);
    expect(views[2]?.lastError).toBe('errcode -1');
    expect(h.store.record('msg_stale')?.status).toBe(STATUS.deferred);
    expect(dlq.visible('normal')).toHaveLength(5);
  });
});

describe('dlq redrive', () => {
  it('brings a dead message back as a fresh copy the sender delivers once, with WeCom’s duplicate check', async () => {
    const { clock, h, dlq, deps, crashed } = setup();
    await crashed('msg_back', { status: STATUS.dead }, 1);
    clock.advance(60_000);

    const results = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(results).toEqual([
      expect.objectContaining({ id: 'msg_back', outcome: 'redriven', status: 'queued' }),
    ]);
    expect(dlq.messages).toEqual([]);
    expect(h.store.record('msg_back')).toMatchObject({
      status: STATUS.queued,
      generation: 2,
      inDoubt: { since: new Date(START).toISOString() },
    });
    expect(h.store.record('msg_back')?.events?.at(-1)).toMatchObject({ type: 'redriven' });
    const [copy] = h.lanes.enqueued;
    expect(copy).toMatchObject({
      lane: 'normal',
      message: {
        generation: 2,
        inDoubt: { since: expect.any(String) },
        redrivenAt: new Date(clock.now()).toISOString(),
      },
    });

    const m = queued('msg_back', START);
    await processBatch(h.deps, [m.sqs(copy?.message as QueuedMessage, 1)]);

    expect(h.store.record('msg_back')?.status).toBe(STATUS.sent);
    expect(h.wecom.sends).toEqual([
      expect.objectContaining({ enable_duplicate_check: 1, duplicate_check_interval: 3600 }),
    ]);
  });

  it('only deletes the leftover copy of a message that ended or that a newer copy owns', async () => {
    const { h, dlq, deps, crashed } = setup();
    await crashed('msg_sent', { status: STATUS.sent });
    await crashed('msg_stale', { generation: 3 });

    const results = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ['msg_sent', 'already_handled'],
      ['msg_stale', 'already_handled'],
    ]);
    expect(h.lanes.enqueued).toEqual([]);
    expect(dlq.messages).toEqual([]);
    expect(h.store.record('msg_stale')).toMatchObject({ status: STATUS.queued, generation: 3 });
  });

  it('refuses a message WeCom’s duplicate check no longer covers, unless forced; then protection starts afresh', async () => {
    const { clock, h, dlq, deps, crashed } = setup();
    await crashed('msg_old', { inDoubt: { since: new Date(START).toISOString() } });
    clock.advance(3_600_000); // the interval fixed at acceptance: 3600 s

    const [refused] = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(refused).toMatchObject({ id: 'msg_old', outcome: 'refused' });
    expect(refused?.detail).toContain('3600 s');
    expect(h.lanes.enqueued).toEqual([]);
    expect(h.store.record('msg_old')).toMatchObject({ status: STATUS.queued, generation: 0 });
    expect(dlq.visible('normal')).toHaveLength(1);

    const [forced] = await redriveDeadLetters(deps, { lane: 'normal', max: 10, force: true });

    expect(forced).toMatchObject({
      outcome: 'redriven',
      detail: expect.stringContaining('may arrive twice'),
    });
    expect(h.store.record('msg_old')?.inDoubt?.since).toBe(new Date(clock.now()).toISOString());
    const copy = h.lanes.enqueued[0]?.message as QueuedMessage;
    await processBatch(h.deps, [queued('msg_old', START).sqs(copy, 1)]);
    expect(h.store.record('msg_old')?.status).toBe(STATUS.sent);
  });

  it('redrives only the ids asked for and shows the others again untouched', async () => {
    const { h, dlq, deps, crashed } = setup();
    await crashed('msg_a');
    await crashed('msg_b');

    const results = await redriveDeadLetters(deps, { lane: 'normal', max: 10, ids: ['msg_b'] });

    expect(results.map((r) => r.id)).toEqual(['msg_b']);
    expect(dlq.visible('normal').map((m) => JSON.parse(m.body).id)).toEqual(['msg_a']);
    expect(h.store.record('msg_a')?.status).toBe(STATUS.queued);
  });

  it('keeps the DLQ copy when the lane refuses the copy, and a second run finishes the redrive once', async () => {
    const { h, dlq, deps, crashed } = setup();
    await crashed('msg_flaky');
    const enqueue = h.lanes.enqueue.bind(h.lanes);
    let down = true;
    h.lanes.enqueue = async (...args) => {
      if (down) throw new Error('SQS is unavailable right now');
      return enqueue(...args);
    };

    const [first] = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });
    down = false;
    const [second] = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(first).toMatchObject({ outcome: 'failed', detail: expect.stringContaining('left in the DLQ') });
    expect(second).toMatchObject({ outcome: 'redriven', detail: 'finished an interrupted redrive' });
    expect(h.lanes.enqueued.map((e) => e.message.generation)).toEqual([1]);
    expect(h.store.record('msg_flaky')).toMatchObject({ status: STATUS.queued, generation: 1 });
    expect(dlq.messages).toEqual([]);
  });
});

describe('dlq filters and the redrive verdict', () => {
  it('takes only the apps asked for: another app’s and an unreadable message are neither changed nor shown', async () => {
    const { h, dlq, deps, crashed } = setup();
    await crashed('msg_mine');
    const theirs = queued('msg_theirs', START, { ...textRequest(), app: 'other' });
    await h.store.create(theirs.record);
    dlq.put('normal', theirs.body(), START);
    dlq.put('normal', '{"not":"a body"}', START);

    const views = await listDeadLetters(deps, { lane: 'normal', max: 10, apps: ['ops'] });
    const results = await redriveDeadLetters(deps, { lane: 'normal', max: 10, apps: ['ops'] });

    expect(views.map((v) => v.id)).toEqual(['msg_mine']);
    expect(results.map((r) => [r.id, r.outcome])).toEqual([['msg_mine', 'redriven']]);
    expect(h.store.record('msg_theirs')?.status).toBe(STATUS.queued);
    expect(dlq.visible('normal')).toHaveLength(2);
  });

  it('says a message is redrivable exactly when a redrive sends it, and why not otherwise', async () => {
    const { clock, h, dlq, deps, crashed } = setup();
    await crashed('msg_fresh');
    await crashed('msg_sent', { status: STATUS.sent });
    await crashed('msg_stale', { generation: 2, status: STATUS.deferred });
    await crashed('msg_old', { inDoubt: { since: new Date(START).toISOString() } });
    dlq.put('normal', encodeQueuedMessage(queued('msg_gone', START).body()), START);
    clock.advance(3_600_000);
    // A fresh message: accepted and dead-lettered within the interval.
    const fresh = queued('msg_new', clock.now());
    await h.store.create(fresh.record);
    dlq.put('normal', fresh.body(), clock.now());

    const views = await listDeadLetters(deps, { lane: 'normal', max: 10 });
    const results = await redriveDeadLetters(deps, { lane: 'normal', max: 10 });

    const verdicts = Object.fromEntries(views.map((v) => [v.id, [v.redrivable, v.notRedrivableReason]]));
    expect(verdicts).toEqual({
      msg_fresh: [false, expect.stringContaining('duplicate check (3600 s) no longer covers it')],
      msg_sent: [false, 'already sent: a redrive only removes its leftover DLQ copy'],
      msg_stale: [false, expect.stringContaining('a newer copy (generation 2)')],
      msg_old: [false, expect.stringContaining('no longer covers it')],
      msg_gone: [false, expect.stringContaining('no record')],
      msg_new: [true, undefined],
    });
    const sent = results.filter((r) => r.outcome === 'redriven').map((r) => r.id);
    expect(sent).toEqual(views.filter((v) => v.redrivable).map((v) => v.id));
    expect(h.lanes.enqueued.map((e) => e.message.id)).toEqual(['msg_new']);
  });

  it('calls a message whose ttl_seconds passed not redrivable: the sender would only mark it expired', async () => {
    const { clock, h, dlq, deps } = setup();
    const short = queued('msg_ttl', START, { ...textRequest(), ttlSeconds: 60 });
    await h.store.create(short.record);
    dlq.put('normal', short.body(), START);
    clock.advance(120_000);

    const [view] = await listDeadLetters(deps, { lane: 'normal', max: 10 });

    expect(view).toMatchObject({
      redrivable: false,
      notRedrivableReason: 'its ttl_seconds has passed: a redrive would only mark it expired',
    });
  });
});
