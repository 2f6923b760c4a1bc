import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAt } from '#lib/schedule/index.js';
import { newDevKey } from '#local/dev-config.js';
import {
  type JsonBody,
  scaledMinutes,
  startTestGateway,
  type TestGateway,
  text,
  waitFor,
} from '#test/helpers/gateway.js';

const ZONE = 'Asia/Shanghai';
const MINUTE = 60_000;

/** `HH:MM` in Shanghai of an instant. */
const clockOf = (ms: number) => {
  const l = localAt(ms, ZONE);
  return `${String(l.hour).padStart(2, '0')}:${String(l.minute).padStart(2, '0')}`;
};

/** A whole minute about `aheadMs` from `now`, neither :00/:30 nor the minute before them (a spread stays clear). */
function quietEnd(now: number, aheadMs: number): number {
  let t = Math.ceil((now + aheadMs) / MINUTE) * MINUTE;
  while ([0, 29, 30, 59].includes(Math.floor(t / MINUTE) % 60)) t += MINUTE;
  return t;
}

/**
 * Quiet hours on the local stack, on 2-second WeCom minutes: a normal message is held to the window's end and a high
 * one goes through; a message canceled while it waits for its quota slot is never delivered; and 1,000 messages
 * released at the end of quiet hours are spread and kept within WeCom's limits under the strict readings.
 */
describe('quiet hours and releases', () => {
  let gw: TestGateway;
  const bypass = newDevKey();
  const start = Date.now();
  // Two apps with windows that began an hour ago: ops's ends about 20 minutes ahead, bulk's about 40.
  const opsEnd = quietEnd(start, 20 * MINUTE);
  const bulkEnd = quietEnd(opsEnd, 20 * MINUTE);
  const SPREAD_SECONDS = 8;

  beforeAll(async () => {
    gw = await startTestGateway({
      ...scaledMinutes(2_000),
      apps: ['ops', 'bulk', 'slow'],
      extraApiKeys: [
        {
          name: 'oncall',
          sha256: bypass.sha256,
          apps: ['ops'],
          scopes: ['messages:write', 'quiet-hours:bypass'],
        },
      ],
      configure: (config) => {
        config.apiKeys[0]?.apps.push('bulk', 'slow');
        // One message a (2-second) minute to a member: a burst's later messages wait seconds for their slots.
        const slow = config.apps.slow;
        if (slow) slow.quota = { ...slow.quota, perMemberPerMinute: 2 };
        for (const [name, end] of [
          ['ops', opsEnd],
          ['bulk', bulkEnd],
        ] as const) {
          const app = config.apps[name];
          if (!app) continue;
          app.quietHours = { timeZone: ZONE, start: clockOf(start - 60 * MINUTE), end: clockOf(end) };
          app.schedule = { spreadSeconds: name === 'bulk' ? SPREAD_SECONDS : 0 };
        }
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  const sim = () => gw.stack.simulator as NonNullable<TestGateway['stack']['simulator']>;
  const del = (id: string) =>
    fetch(`${gw.stack.apiUrl}/v1/messages/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.key}` },
    });

  it('holds a normal message until the end of the window, lets a high one through, and a key with the scope opt out', async () => {
    const held = await gw.post('/v1/messages', text('good morning', 'sleeper'));
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'scheduled', send_at: new Date(opsEnd).toISOString() });
    expect((await gw.get(`/v1/messages/${held.body.id}`)).body.scheduled_by).toBe('quiet_hours');

    const urgent = await gw.post('/v1/messages', text('db-1 is down', 'sleeper', { priority: 'high' }));
    expect(urgent.body.status).toBe('queued');
    await gw.waitForStatus(urgent.body.id, ['sent']);

    // quiet_hours: false needs the scope: the test's key lacks it (403, nothing stored), the on-call key has it.
    const refused = await gw.post('/v1/messages', text('let me through', 'sleeper2', { quiet_hours: false }));
    expect(refused.status).toBe(403);
    const optedOut = await gw.post(
      '/v1/messages',
      text('let me through', 'sleeper2', { quiet_hours: false }),
      {
        authorization: `Bearer ${bypass.key}`,
      },
    );
    expect(optedOut.body.status).toBe('queued');
    await waitFor(() => sim().inbox('sleeper2').length === 1);

    expect(
      sim()
        .inbox('sleeper')
        .map((m) => m.payload),
    ).toEqual([{ content: 'db-1 is down' }]);
    gw.stack.clock.advance(opsEnd - gw.stack.clock.now() + 1_000);
    const sent = await gw.waitForStatus(held.body.id, ['sent']);
    expect(Date.parse(sent.sent_at)).toBeGreaterThanOrEqual(opsEnd);
    expect(sim().inbox('sleeper')).toHaveLength(2);
  });

  it('never delivers a message canceled while it waits (deferred) for its quota slot', async () => {
    // 5 at once to one member of an app that may send it one message every 2 s: the first goes, the others are
    // deferred holding slots 2-8 s ahead, their copies in the lane, unclaimed, until a moment before their slot.
    const res = await gw.post('/v1/messages/batch', {
      messages: Array.from({ length: 5 }, (_, i) => ({ ...text(`burst ${i}`, 'busy'), app: 'slow' })),
    });
    const ids: string[] = res.body.results.map((r: JsonBody) => r.id);
    const canceled = ids.at(-1) as string;
    await gw.waitForStatus(canceled, ['deferred'], 10_000);
    const answer = await del(canceled);
    expect(answer.status).toBe(200);

    const others = ids.filter((id) => id !== canceled);
    await waitFor(() => sim().inbox('busy').length >= others.length, 30_000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await gw.get(`/v1/messages/${canceled}`)).body.status).toBe('canceled');
    const delivered = sim()
      .inbox('busy')
      .map((m) => (m.payload as { content: string }).content);
    expect(delivered).toEqual(['burst 0', 'burst 1', 'burst 2', 'burst 3']);
    expect(sim().drops()).toEqual([]);
  });

  it('spreads 1,000 messages released at the end of quiet hours, all delivered within every WeCom limit', async () => {
    const n = 1_000;
    const members = 100;
    const ids: string[] = [];
    for (let from = 0; from < n; from += 100) {
      const res = await gw.post('/v1/messages/batch', {
        messages: Array.from({ length: 100 }, (_, i) => ({
          ...text(`morning ${from + i}`, `m${(from + i) % members}`),
          app: 'bulk',
        })),
      });
      expect(res.status).toBe(207);
      for (const r of res.body.results) {
        expect(r.status).toBe('scheduled');
        ids.push(r.id);
      }
    }
    // Releases spread over the window after its end, none in a crowded minute.
    const releases = await Promise.all(
      ids.slice(0, 100).map(async (id) => Date.parse((await gw.get(`/v1/messages/${id}`)).body.release_at)),
    );
    expect(Math.min(...releases)).toBeGreaterThanOrEqual(bulkEnd);
    expect(Math.max(...releases)).toBeLessThan(bulkEnd + SPREAD_SECONDS * 1000);
    expect(Math.max(...releases) - Math.min(...releases)).toBeGreaterThan(SPREAD_SECONDS * 1000 * 0.8);
    const delivered = sim().stats().delivered;

    // To a second before the window's end: every timer fires, each copy goes with the SQS delay left to its release.
    gw.stack.clock.advance(bulkEnd - gw.stack.clock.now() - 1_000);
    await waitFor(
      () => sim().stats().delivered + sim().drops().length >= delivered + n,
      90_000,
      () => `${sim().stats().delivered - delivered} of ${n} delivered`,
    );
    expect(sim().drops()).toEqual([]);
    expect(sim().stats().byErrcode['45009'] ?? 0).toBe(0);
    // Nothing went before its release (the simulator's clock follows the gateway's).
    const sent = await Promise.all(
      ids.slice(0, 100).map(async (id) => (await gw.get(`/v1/messages/${id}`)).body),
    );
    for (const m of sent) expect(Date.parse(m.sent_at)).toBeGreaterThanOrEqual(Date.parse(m.release_at));
  }, 120_000);
});
