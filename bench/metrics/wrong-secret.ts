/**
 * SPEC §7: `gettoken` calls per minute per app while its secret is wrong, with a backlog → ≤ 2.
 *
 * WeCom knows the app by another secret than the gateway's config, so every `gettoken` answers 40001, and the
 * simulator plays the strict readings (an IP is banned for an hour after 10 wrong secrets within an hour). A
 * backlog of 300 messages goes in and the stack runs with its default schedules (gettoken after 1, 5, 15 min; the
 * app's circuit probed after 1, 2, 5… min) for a little over two minutes. Measured: the most `gettoken` calls in
 * any 60 s of the run (from the simulator's request log), messages failed, and whether the IP was banned.
 */
import { startBenchGateway } from '../lib/gateway.js';
import type { Metric } from '../lib/harness.js';
import { mapLimit, sleep } from '../lib/harness.js';
import { textMessage } from '../lib/http.js';

const BACKLOG = 300;
const OBSERVE_MS = 130_000;

export const wrongSecret: Metric = {
  id: 'wrong-secret',
  title: 'gettoken calls per minute with a wrong secret and a backlog',
  async run(ctx) {
    const gw = await startBenchGateway({
      simulator: {
        readings: 'strict',
        apps: [{ corpId: 'wwtest00000000001', agentId: 1000002, secret: 'the-secret-in-the-console' }],
      },
    });
    try {
      const sim = gw.stack.simulator;
      if (!sim) throw new Error('no simulator');
      const ids: string[] = [];
      for (let i = 0; i < BACKLOG; i += 100) {
        const messages = Array.from({ length: 100 }, (_, j) =>
          textMessage(`secret ${ctx.runId} ${i + j}`, `s${j}`),
        );
        const res = await gw.api.post('/v1/messages/batch', { messages });
        for (const r of res.body?.results ?? []) if (r.id) ids.push(r.id);
      }
      ctx.log(
        `${ids.length} messages queued for an app whose secret is wrong; watching for ${OBSERVE_MS / 1000} s`,
      );
      const started = Date.now();
      await sleep(OBSERVE_MS);
      const calls = sim
        .requests()
        .filter((r) => r.path.endsWith('/gettoken') && r.at >= started - 10_000)
        .map((r) => r.at);
      const perMinute = Math.max(
        0,
        ...calls.map((t) => calls.filter((u) => u >= t && u < t + 60_000).length),
      );
      const statuses: Record<string, number> = {};
      await mapLimit(ids, 8, async (id) => {
        const s = (await gw.api.get(`/v1/messages/${id}`)).body?.status ?? 'unknown';
        statuses[s] = (statuses[s] ?? 0) + 1;
      });
      const banned = Object.keys(sim.stats().ipBans.bannedUntil).length;
      return {
        rows: [
          {
            metric: 'gettoken calls in any minute, wrong secret, backlog',
            measured: `${perMinute} (${calls.length} in ${Math.round(OBSERVE_MS / 1000)} s)`,
            target: '≤ 2',
            pass: perMinute <= 2,
            value: perMinute,
          },
          {
            metric: 'messages failed or dead while the app is held; IP banned',
            measured: `${(statuses.failed ?? 0) + (statuses.dead ?? 0)} of ${ids.length}; ${banned ? 'yes' : 'no'}`,
            target: '0; no',
            pass: (statuses.failed ?? 0) + (statuses.dead ?? 0) === 0 && banned === 0,
            value: (statuses.failed ?? 0) + (statuses.dead ?? 0),
          },
        ],
        details: { backlog: ids.length, gettokenAt: calls.map((t) => t - started), statuses, ipBans: banned },
        notes: [
          `wrong-secret: ${ids.length} messages, gettoken at ${calls.map((t) => `${Math.round((t - started) / 1000)} s`).join(', ')}; statuses ${JSON.stringify(statuses)}; app state ${JSON.stringify((await gw.api.get('/v1/apps/ops')).body?.state)}.`,
        ],
      };
    } finally {
      await gw.stop();
    }
  },
};
