/**
 * SPEC §7: chaos run under the simulator's strict readings (issue 9: rolling windows, duplicate check only between
 * byte-identical flagged requests, day blocks, IP bans, sub-party reach) — accepted = sent + failed + dead + expired
 * (0 lost); 0 duplicate deliveries; 0 silent drops.
 *
 * The stack runs with its own API and sender (simulator at 20 ms; retries and pauses shortened so the run ends in
 * seconds: backoff 1–2 s, first 45009 pause 1.5 s, WeCom headers/body timeout 1 s). While a bounded mixed load goes in —
 * single POSTs (a fifth `high`, a tenth with an Idempotency-Key, each of those replayed once with the same key and
 * body), plus batch POSTs of 50 — the simulator injects faults on message/send at fixed rates: -1 (5%), HTTP 500
 * (5%), 42001 (3%, the token is revoked), timeoutAfterDelivery (3%: delivered, but the answer never comes),
 * resetAfterDelivery (2%: delivered, then the connection drops), 45009 (1%), and the permanent 40003 (1%) so that
 * `failed` occurs too. During the single POSTs the SQS emulator and then
 * the DynamoDB emulator restart (each down for 1 s, back on the same endpoint with their data); POSTs answered 503
 * meanwhile count as rejected, not accepted.
 *
 * After the load, the bench waits (bounded) until every accepted id has a terminal status and the lanes are empty,
 * then reconciles every id: its status from GET /v1/messages/{id}, and its content in its member's simulator inbox.
 * Lost = an accepted id that is not sent/failed/dead, or `sent` but in no inbox. Duplicate = the same content
 * twice in one member's inbox (duplicates WeCom suppressed never reach an inbox, so they are not counted).
 */
import { QUEUES } from '#lib/resources/index.js';
import { queueDepth } from '#local/harness/sender.js';
import { startBenchGateway } from '../lib/gateway.js';
import type { Metric } from '../lib/harness.js';
import { mapLimit, round, sleep, waitUntil } from '../lib/harness.js';
import { textMessage } from '../lib/http.js';

const SINGLES = 240;
const BATCHES = 3;
const BATCH_SIZE = 50;
const MEMBERS = 80;
const TERMINAL = new Set(['sent', 'failed', 'dead', 'expired']);
const RESTARTS = ['sqs', 'dynamodb'] as const;
const RESTART_GAP_MS = 1_000;
const RESTART_DOWN_MS = 1_000;
/**
 * A receive whose answer is lost in an SQS restart leaves its messages invisible for the lane's whole visibility
 * timeout (as in AWS), and so does a retry delay that could not be set while SQS was down: wait that long and more.
 */
const SETTLE_BOUND_MS = (QUEUES.normal.visibilityTimeoutSeconds + 60) * 1_000;
const FAULTS = [
  { kind: { errcode: -1 }, rate: 0.05, label: '-1' },
  { kind: 'http500', rate: 0.05, label: 'http500' },
  { kind: { errcode: 42001 }, rate: 0.03, label: '42001' },
  { kind: 'timeoutAfterDelivery', rate: 0.03, label: 'timeoutAfterDelivery' },
  { kind: 'resetAfterDelivery', rate: 0.02, label: 'resetAfterDelivery' },
  { kind: { errcode: 45009 }, rate: 0.01, label: '45009' },
  { kind: { errcode: 40003 }, rate: 0.01, label: '40003 (permanent)' },
] as const;

interface Sent {
  id: string;
  content: string;
  member: string;
}

export const chaos: Metric = {
  id: 'chaos',
  title: 'chaos run under the strict readings: nothing lost, nothing delivered twice, nothing dropped',
  async run(ctx) {
    const gw = await startBenchGateway({
      simulator: { readings: 'strict' },
      runtime: {
        retry: { baseSeconds: 1, capSeconds: 2 },
        rateLimitPauseMs: 1_500,
        deferJitterSeconds: 1,
        wecom: { headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 },
      },
    });
    let pendingRestarts: Promise<void> = Promise.resolve();
    try {
      const sim = gw.stack.simulator;
      if (!sim) throw new Error('no simulator');
      for (const f of FAULTS) sim.faults.setRate(f.kind, f.rate);
      const started = Date.now();
      const accepted = new Map<string, Sent>();
      let rejected = 0;
      let idempotencyMismatches = 0;
      const keyed: { key: string; body: unknown; id: string }[] = [];

      ctx.log(`load: ${SINGLES} single POSTs + ${BATCHES} batches of ${BATCH_SIZE}, faults on`);
      // While the single POSTs run, SQS and then DynamoDB restart under the gateway (down for a second each,
      // back with their data), on top of the WeCom faults.
      const restarts: string[] = [];
      let restartError: unknown;
      const restarting = (async () => {
        for (const which of RESTARTS) {
          await sleep(RESTART_GAP_MS);
          const at = Date.now() - started;
          await gw.stack.restartEmulator(which, RESTART_DOWN_MS);
          restarts.push(`${which} down at ${round(at / 1000, 1)} s for ${RESTART_DOWN_MS} ms`);
          ctx.log(`restarted ${which} (down ${RESTART_DOWN_MS} ms)`);
        }
      })().catch((err: unknown) => {
        restartError = err;
      });
      // Whatever happens below, the stack is stopped only after the restarts ended (see finally).
      pendingRestarts = restarting;
      await mapLimit(
        Array.from({ length: SINGLES }, (_, i) => i),
        6,
        async (i) => {
          const member = `c${i % MEMBERS}`;
          const content = `chaos ${ctx.runId} s${i}`;
          const body = textMessage(content, member, { priority: i % 5 === 0 ? 'high' : 'normal' });
          const key = i % 10 === 0 ? `chaos-${ctx.runId}-${i}` : undefined;
          const res = await gw.api.post('/v1/messages', body, key ? { 'idempotency-key': key } : {});
          if (res.status !== 202) {
            rejected++;
            return;
          }
          accepted.set(res.body.id, { id: res.body.id, content, member });
          if (key) keyed.push({ key, body, id: res.body.id });
        },
      );
      await restarting;
      if (restartError) throw new Error('an emulator restart failed', { cause: restartError });
      for (let b = 0; b < BATCHES; b++) {
        const items = Array.from({ length: BATCH_SIZE }, (_, j) => ({
          content: `chaos ${ctx.runId} b${b}.${j}`,
          member: `c${(b * BATCH_SIZE + j) % MEMBERS}`,
        }));
        const res = await gw.api.post('/v1/messages/batch', {
          messages: items.map((it, j) =>
            textMessage(it.content, it.member, { priority: j % 4 === 0 ? 'high' : 'normal' }),
          ),
        });
        for (const r of res.body?.results ?? []) {
          const it = items[r.index as number];
          if (r.id && it) accepted.set(r.id, { id: r.id, ...it });
          else rejected++;
        }
      }
      // Replays: same key, same body → the same id, no second message.
      await mapLimit(keyed, 4, async (k) => {
        const res = await gw.api.post('/v1/messages', k.body, { 'idempotency-key': k.key });
        if (res.status !== 202 || res.body?.id !== k.id) idempotencyMismatches++;
      });

      ctx.log(`${accepted.size} accepted; waiting for every id to reach sent/failed/dead`);
      const status = new Map<string, string>();
      const settled = await waitUntil(
        async () => {
          const open = [...accepted.keys()].filter((id) => !TERMINAL.has(status.get(id) ?? ''));
          await mapLimit(open, 8, async (id) => {
            const res = await gw.api.get(`/v1/messages/${id}`);
            status.set(id, res.body?.status ?? `http ${res.status}`);
          });
          return [...accepted.keys()].every((id) => TERMINAL.has(status.get(id) ?? ''));
        },
        SETTLE_BOUND_MS,
        1_000,
      );
      const lanesEmpty = await waitUntil(
        async () => (await queueDepth(gw.stack, 'high')) + (await queueDepth(gw.stack, 'normal')) === 0,
        15_000,
        250,
      );
      const settleMs = Date.now() - started;
      sim.faults.clear();
      // One last read of every id, after the lanes drained.
      await mapLimit([...accepted.keys()], 8, async (id) => {
        const res = await gw.api.get(`/v1/messages/${id}`);
        status.set(id, res.body?.status ?? `http ${res.status}`);
      });

      // Reconcile against the inboxes.
      const prefix = `chaos ${ctx.runId} `;
      const seen = new Map<string, number>();
      for (let m = 0; m < MEMBERS; m++) {
        for (const msg of sim.inbox(`c${m}`)) {
          const content = (msg.payload as { content?: string }).content ?? '';
          if (!content.startsWith(prefix)) continue;
          const k = `c${m}|${content}`;
          seen.set(k, (seen.get(k) ?? 0) + 1);
        }
      }
      const byStatus: Record<string, number> = {};
      let lost = 0;
      let sentNotDelivered = 0;
      let deadButDelivered = 0;
      for (const s of accepted.values()) {
        const st = status.get(s.id) ?? 'unknown';
        byStatus[st] = (byStatus[st] ?? 0) + 1;
        const delivered = (seen.get(`${s.member}|${s.content}`) ?? 0) > 0;
        if (!TERMINAL.has(st)) lost++;
        else if (st === 'sent' && !delivered) {
          lost++;
          sentNotDelivered++;
        } else if (st === 'dead' && delivered) deadButDelivered++;
      }
      const duplicates = [...seen.values()].filter((n) => n > 1).reduce((a, n) => a + n - 1, 0);
      // The story of the first few duplicated messages, from their own event log (for the report).
      const duplicated = [...accepted.values()].filter(
        (s) => (seen.get(`${s.member}|${s.content}`) ?? 0) > 1,
      );
      const timeline = async (s: Sent) => {
        const res = await gw.api.get(`/v1/messages/${s.id}`);
        return {
          id: s.id,
          status: res.body?.status,
          attempts: res.body?.attempts,
          events: (res.body?.events ?? []).map((e: { type: string; detail?: string }) =>
            e.detail ? `${e.type}: ${e.detail}` : e.type,
          ),
        };
      };
      const unsettledTimelines = await mapLimit(
        [...accepted.values()].filter((s) => !TERMINAL.has(status.get(s.id) ?? '')).slice(0, 5),
        5,
        timeline,
      );
      const duplicateTimelines = await mapLimit(duplicated.slice(0, 5), 5, async (s) => {
        const res = await gw.api.get(`/v1/messages/${s.id}`);
        return {
          id: s.id,
          copies: seen.get(`${s.member}|${s.content}`),
          attempts: res.body?.attempts,
          events: (res.body?.events ?? []).map((e: { type: string; detail?: string }) =>
            e.detail ? `${e.type}: ${e.detail}` : e.type,
          ),
        };
      });
      const known = new Set([...accepted.values()].map((s) => `${s.member}|${s.content}`));
      const phantom = [...seen.keys()].filter((k) => !known.has(k)).length;
      const dlq = (await queueDepth(gw.stack, 'high-dlq')) + (await queueDepth(gw.stack, 'normal-dlq'));
      const stats = sim.stats();
      const sum =
        (byStatus.sent ?? 0) + (byStatus.failed ?? 0) + (byStatus.dead ?? 0) + (byStatus.expired ?? 0);
      return {
        rows: [
          {
            metric: 'chaos (strict readings): accepted = sent + failed + dead + expired',
            measured: `${lost} lost (${accepted.size} = ${byStatus.sent ?? 0} sent + ${byStatus.failed ?? 0} failed + ${byStatus.dead ?? 0} dead + ${byStatus.expired ?? 0} expired)`,
            target: '0 lost',
            pass: lost === 0 && sum === accepted.size,
            value: lost,
          },
          {
            metric: 'chaos (strict readings): duplicate deliveries',
            measured: String(duplicates),
            target: '0',
            pass: duplicates === 0 && phantom === 0,
            value: duplicates,
          },
          {
            metric: 'chaos (strict readings): silent drops',
            measured: String(stats.dropped),
            target: '0',
            pass: stats.dropped === 0,
            value: stats.dropped,
          },
        ],
        details: {
          readings: stats.readings,
          faults: FAULTS.map((f) => ({ kind: f.label, rate: f.rate })),
          restarts,
          accepted: accepted.size,
          rejected,
          idempotentReplays: keyed.length,
          idempotencyMismatches,
          byStatus,
          lost,
          sentNotDelivered,
          deadButDelivered,
          duplicates,
          duplicateTimelines,
          unsettledTimelines,
          phantomDeliveries: phantom,
          dlqDepth: dlq,
          settled,
          lanesEmpty,
          settleMs,
          simulator: {
            sendCalls: stats.sendCalls,
            gettokenCalls: stats.gettokenCalls,
            byErrcode: stats.byErrcode,
            duplicatesSuppressed: stats.duplicatesSuppressed,
            drops: stats.dropped,
            delivered: stats.delivered,
          },
        },
        notes: [
          `chaos (readings ${JSON.stringify(stats.readings)}): ${accepted.size} accepted (${rejected} rejected, ${keyed.length} idempotent replays, ${idempotencyMismatches} answered with another id), settled in ${round(settleMs / 1000, 1)} s${settled ? '' : ' (NOT all terminal within the bound)'}; statuses ${JSON.stringify(byStatus)}; WeCom saw ${stats.sendCalls} send calls (${JSON.stringify(stats.byErrcode)}), suppressed ${stats.duplicatesSuppressed} repeats with its duplicate check, ${stats.gettokenCalls} gettoken calls; DLQ depth ${dlq}; dead but delivered ${deadButDelivered}; silent drops ${stats.dropped}. Emulator restarts: ${restarts.join('; ')}.`,
        ],
      };
    } finally {
      await sleep(0);
      await pendingRestarts;
      await gw.stop();
    }
  },
};
