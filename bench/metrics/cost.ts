/**
 * SPEC §7: modeled AWS cost per million delivered messages → ≤ USD 3.00 and ≥ 30% below a naive design.
 * Prices, region and assumptions: bench/cost-model.ts. Inputs: the steady-state phases measured by `dynamo`.
 */
import { FUNCTIONS } from '#lib/resources/index.js';
import {
  ASSUMPTIONS,
  type CostBreakdown,
  EXCLUDED,
  gatewayUsage,
  type MeasuredPhase,
  naiveUsage,
  PRICES,
  priceUsage,
  REGION,
  type UsagePerMessage,
} from '../cost-model.js';
import type { Metric, Row } from '../lib/harness.js';
import { fmt, round } from '../lib/harness.js';
import { EMPTY_RECEIVE } from '../lib/sqs-meter.js';
import type { SteadyState } from './dynamo-requests.js';

const MAX_USD = 3.0;
const MIN_SAVING = 0.3;
/** Sensitivity: WeCom seen from us-east-1 answers in ~200 ms rather than the simulator's 20 ms. */
const FAR_WECOM_EXTRA_MS = 180;

export function toMeasured(s: SteadyState): MeasuredPhase {
  const sum = (
    fn: string | undefined,
    pick: (o: { wru: number; rru: number; failedConditional: number }) => number,
  ) =>
    Object.entries(s.dynamo)
      .filter(([f]) => fn === undefined || f === fn)
      .flatMap(([, ops]) => Object.values(ops))
      .reduce((n, o) => n + pick(o), 0);
  const put = s.dynamo.ingest?.PutItem;
  const opTotals = Object.values(s.dynamo)
    .flatMap((ops) => Object.values(ops))
    .reduce((a, o) => ({ ms: a.ms + o.totalMs, n: a.n + o.requests }), { ms: 0, n: 0 });
  return {
    messages: s.messages,
    apiRequests: s.apiRequests,
    memoryMb: { ingest: FUNCTIONS.ingest.memoryMb, sender: FUNCTIONS.sender.memoryMb },
    ingest: s.ingest,
    sender: s.sender,
    // Empty receives are idle polling (a fixed cost, and inflated by the emulator): see bench/lib/sqs-meter.ts.
    sqsBillableRequests: Object.values(s.sqs)
      .flatMap((byAction) => Object.entries(byAction))
      .filter(([action]) => action !== EMPTY_RECEIVE)
      .reduce((n, [, c]) => n + c.billable, 0),
    dynamo: {
      wru: sum(undefined, (o) => o.wru),
      rru: sum(undefined, (o) => o.rru),
      failedConditional: sum(undefined, (o) => o.failedConditional),
    },
    recordBytes: put && put.requests > 0 ? put.itemBytes / put.requests : 1024,
    recordWru: put && put.requests > 0 ? put.wru / put.requests : 1,
    wecom: {
      sendCalls: s.wecom.sendCalls,
      gettokenCalls: s.wecom.gettokenCalls,
      bodyBytes: s.wecom.bodyBytes,
      meanRoundTripMs: s.wecom.meanSendRoundTripMs,
    },
    dynamoOpMs: opTotals.n > 0 ? opTotals.ms / opTotals.n : 5,
  };
}

const money = (c: CostBreakdown) =>
  Object.fromEntries(Object.entries(c.perMillion).map(([k, v]) => [k, round(v, 4)]));
const usageRounded = (u: UsagePerMessage) =>
  Object.fromEntries(Object.entries(u).map(([k, v]) => [k, round(v, 6)]));

export const cost: Metric = {
  id: 'cost',
  title: 'modeled AWS cost per million delivered messages',
  needs: ['dynamo'],
  async run(ctx) {
    const shared = ctx.results.get('dynamo')?.shared as
      | { backlog: SteadyState; trickle: SteadyState }
      | undefined;
    if (!shared) throw new Error('the dynamo metric did not produce its steady-state measurements');
    const trickle = toMeasured(shared.trickle);
    const backlog = toMeasured(shared.backlog);
    const naive = naiveUsage(trickle);
    const naiveCost = priceUsage(naive);
    const rows: Row[] = [];
    const scenarios: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const [name, label, m] of [
      ['trickle', 'single POSTs, 1 msg/invocation', trickle],
      ['backlog', 'batch POSTs, full batches', backlog],
    ] as const) {
      const usage = gatewayUsage(m);
      const c = priceUsage(usage);
      const saving = 1 - c.totalPerMillion / naiveCost.totalPerMillion;
      // Sensitivity: a farther WeCom lengthens every sender invocation (and more so the naive one, which calls twice).
      const far = priceUsage({
        ...usage,
        lambdaGbSeconds:
          usage.lambdaGbSeconds +
          (((usage.lambdaInvocations - m.ingest.invocations / m.messages) * FAR_WECOM_EXTRA_MS) / 1000) *
            (FUNCTIONS.sender.memoryMb / 1024),
      });
      const farNaive = priceUsage({
        ...naive,
        lambdaGbSeconds:
          naive.lambdaGbSeconds + ((2 * FAR_WECOM_EXTRA_MS) / 1000) * (FUNCTIONS.sender.memoryMb / 1024),
      });
      rows.push({
        metric: `cost per 1M delivered, ${label}`,
        measured: `$${fmt(c.totalPerMillion)} vs naive $${fmt(naiveCost.totalPerMillion)} (−${fmt(saving * 100, 0)}%)`,
        target: `≤ $${fmt(MAX_USD)} and ≥ ${MIN_SAVING * 100}% below naive`,
        pass: c.totalPerMillion <= MAX_USD && saving >= MIN_SAVING,
        value: round(c.totalPerMillion, 3),
      });
      const top = Object.entries(c.perMillion)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} $${fmt(v)}`)
        .join(', ');
      notes.push(
        `cost ${name} (${label}): ${top}. Per message: ${fmt(usage.apiRequests, 2)} API requests, ${fmt(usage.lambdaInvocations, 2)} invocations, ${fmt(usage.lambdaGbSeconds * 1000, 2)} mGB-s, ${fmt(usage.sqsRequests, 2)} SQS requests, ${fmt(usage.dynamoWru, 2)} WRU, ${fmt(usage.dynamoRru, 3)} RRU, ${fmt(usage.logBytes, 0)} log bytes. With WeCom 200 ms away: $${fmt(far.totalPerMillion)} vs naive $${fmt(farNaive.totalPerMillion)}.`,
      );
      scenarios[name] = {
        label,
        usagePerMessage: usageRounded(usage),
        perMillion: money(c),
        totalPerMillion: round(c.totalPerMillion, 4),
        savingVsNaive: round(saving, 4),
        wecom200msTotalPerMillion: round(far.totalPerMillion, 4),
        naiveWecom200msTotalPerMillion: round(farNaive.totalPerMillion, 4),
        measured: m,
      };
    }
    notes.push(
      `cost naive: ${Object.entries(naiveCost.perMillion)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} $${fmt(v)}`)
        .join(
          ', ',
        )} (one invocation per message, gettoken per send, read-modify-write status, five counters per message; bench/cost-model.ts). Region ${REGION}, list prices; Lambda durations are the local handlers' (inflated by the single-process emulation, so compute is an upper bound).`,
    );
    ctx.log(`priced ${Object.keys(scenarios).length} scenarios against the naive design`);
    return {
      rows,
      details: {
        region: REGION,
        prices: PRICES,
        assumptions: ASSUMPTIONS,
        excluded: EXCLUDED,
        scenarios,
        naive: {
          usagePerMessage: usageRounded(naive),
          perMillion: money(naiveCost),
          totalPerMillion: round(naiveCost.totalPerMillion, 4),
        },
      },
      notes,
    };
  },
};
