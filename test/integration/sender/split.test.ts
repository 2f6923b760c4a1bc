import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '#local/harness/sender.js';
import { maxInRollingWindow } from '#local/harness/windows.js';
import type { ReceivedMessage, WecomSimulator } from '#local/wecom-sim/index.js';
import { cli } from '#test/helpers/cli.js';
import { scaledMinutes, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import { storedState } from '#test/helpers/ingest-gateway.js';

/** About 7,000 bytes of CJK log lines in paragraphs: four parts of WeCom's 2,048. */
const LOG = Array.from(
  { length: 26 },
  (_, i) => `[${String(i).padStart(2, '0')}] 数据库连接池耗尽，重试中 ${'错误详情 '.repeat(18)}`,
).join('\n\n');
const MARKER = /^\((\d+)\/(\d+) · [0-9a-f]{4}\)\n/;

const contents = (inbox: ReceivedMessage[]) => inbox.map((m) => (m.payload as { content: string }).content);
const simOf = (g: TestGateway): WecomSimulator => {
  if (!g.stack.simulator) throw new Error('no simulator');
  return g.stack.simulator;
};

// The parts to one member are paced like its other messages: on 4-second minutes they come 210 ms apart.
const fast = scaledMinutes();

describe('long content split into parts, on the local stack', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(fast);
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  // First, while nothing else is in flight: the stored state must not move at all.
  it('refuses the content without split with a 400 that says so, storing and queueing nothing', async () => {
    const before = await storedState(gw.stack);
    const res = await gw.post('/v1/messages', text(LOG, 'zhangsan'));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'text.content',
        message: `${Buffer.byteLength(LOG)} bytes, max 2048; send "split": true to have it delivered in parts`,
      },
    ]);
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('delivers 7,000 bytes of text to two members as ordered parts of one message, sent when all are', {
    timeout: 60_000,
  }, async () => {
    expect(Buffer.byteLength(LOG)).toBeGreaterThan(6_900);
    const res = await gw.post('/v1/messages', { ...text(LOG, 'zhangsan|lisi'), split: true });
    expect(res.status).toBe(202);
    const n = res.body.parts;
    expect(n).toBe(4);

    const status = await gw.waitForStatus(res.body.id, ['sent', 'failed'], 45_000);
    expect(status.status).toBe('sent');
    expect(status.split).toEqual({ parts: n });
    const sim = simOf(gw);
    for (const member of ['zhangsan', 'lisi']) {
      const got = contents(sim.inbox(member));
      expect(got).toHaveLength(n);
      got.forEach((c, i) => {
        expect(Buffer.byteLength(c)).toBeLessThanOrEqual(2048);
        expect(MARKER.exec(c)?.slice(1)).toEqual([String(i + 1), String(n)]);
      });
      // What the member reads, markers aside, is the whole log.
      expect(got.map((c) => c.replace(MARKER, '')).join('')).toBe(LOG);
    }
    expect(sim.drops()).toEqual([]);
  });

  it('recalls every part of a split message', { timeout: 60_000 }, async () => {
    const res = await gw.post('/v1/messages', { ...text(LOG, 'wangwu'), split: true });
    await gw.waitForStatus(res.body.id, ['sent'], 45_000);
    const recall = await gw.post(`/v1/messages/${res.body.id}/recall`, undefined);
    expect(recall.status).toBe(200);
    const inbox = simOf(gw).inbox('wangwu');
    expect(inbox).toHaveLength(4);
    expect(inbox.every((m) => m.recalled)).toBe(true);
  });

  it('says how many parts in a batch item’s result too', async () => {
    const res = await gw.post('/v1/messages/batch', {
      messages: [{ ...text(LOG, 'sunqi'), split: true }, text('short', 'sunqi')],
    });
    expect(res.status).toBe(207);
    expect(res.body.results).toEqual([
      { index: 0, id: expect.stringMatching(/^msg_/), status: 'queued', parts: 4 },
      { index: 1, id: expect.stringMatching(/^msg_/), status: 'queued' },
    ]);
  });

  it('splits from the CLI: send --split reads the log from stdin and says how many parts', async () => {
    const run = await cli(
      [
        'send',
        '--app',
        'ops',
        '--to',
        'zhaoliu',
        '--text',
        '-',
        '--split',
        '--url',
        gw.stack.apiUrl,
        '--key',
        gw.key,
      ],
      { input: LOG },
    );
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^msg_/);
    expect(run.stderr).toContain('queued in 4 parts');
  });
});

describe('split messages under the strict readings (rolling windows)', () => {
  // As in quota.test.ts: 8-second "minutes", so 40 sends to one member are a burst over WeCom's 30 a minute.
  const windows = { minuteMs: 8_000, hourMs: 480_000, dayMs: 86_400_000 };
  let gw: TestGateway | undefined;
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('keeps the per-member limit: four 10-part messages reach one member without a drop, each in order', {
    timeout: 120_000,
  }, async () => {
    gw = await startTestGateway({
      simulator: { latencyMs: 5, windows, readings: 'strict' },
      runtime: {
        windows: { ...windows, dayOffsetMs: 0 },
        slotWaitMs: 1_500,
        deferJitterSeconds: 0,
        retry: { baseSeconds: 1, capSeconds: 1 },
      },
    });
    const sim = simOf(gw);
    await gw.post('/v1/messages', text('warm-up', 'warm'));
    await waitFor(() => sim.inbox('warm').length === 1);
    // 30 lines of ~530 bytes: three lines a part, ten parts (the default cap).
    const long = (tag: string) =>
      Array.from({ length: 30 }, (_, i) => `${tag}${i} ${'告警 '.repeat(75)}`).join('\n');
    const ids: string[] = [];
    for (const tag of ['A', 'B', 'C', 'D']) {
      const res = await gw.post('/v1/messages', {
        ...text(long(tag), 'oncall'),
        split: true,
        priority: 'high',
      });
      expect(res.status).toBe(202);
      expect(res.body.parts).toBe(10);
      ids.push(res.body.id);
    }
    await waitFor(
      () => sim.inbox('oncall').length + sim.drops().length >= 40,
      100_000,
      () => `oncall has ${sim.inbox('oncall').length} of 40, drops ${sim.drops().length}`,
    );

    expect(sim.drops()).toEqual([]);
    expect(sim.stats().byErrcode['45009'] ?? 0).toBe(0);
    const got = contents(sim.inbox('oncall'));
    for (const tag of ['A', 'B', 'C', 'D']) {
      const mine = got.filter((c) => c.replace(MARKER, '').startsWith(tag));
      expect(mine.map((c) => MARKER.exec(c)?.[1])).toEqual(
        Array.from({ length: 10 }, (_, i) => String(i + 1)),
      );
    }
    const times = sim.inbox('oncall').map((m) => m.receivedAt);
    expect(maxInRollingWindow(times, windows.minuteMs)).toBeLessThanOrEqual(30);
    for (const id of ids) expect((await gw.get(`/v1/messages/${id}`)).body.status).toBe('sent');
    expect(await queueDepth(gw.stack, 'high-dlq')).toBe(0);
  });
});
