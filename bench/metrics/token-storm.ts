/**
 * SPEC §7: `gettoken` calls when 50 sender invocations start cold at once, per token lifetime → exactly 1.
 *
 * 50 fresh sender "containers" (own clients, empty token memory — local/harness/sender.ts) each get one SQS record
 * and are invoked at the same moment. Then, still warm, the 50 are invoked again at once after the token's
 * lifetime ended (the simulator issues 8-second tokens; whatever the gateway's refresh-ahead policy, every
 * container must get a new token by then): again exactly one of them may call gettoken.
 */
import { receiveAll, type SenderContainer, senderContainer } from '#local/harness/sender.js';
import { startBenchGateway } from '../lib/gateway.js';
import type { Metric } from '../lib/harness.js';
import { sleep } from '../lib/harness.js';
import { textMessage } from '../lib/http.js';

const CONTAINERS = 50;
/** A short token lifetime, so that "per token lifetime" fits in the bench: two lifetimes, one gettoken each. */
const TOKEN_TTL_S = 8;

export const tokenStorm: Metric = {
  id: 'token',
  title: 'gettoken calls when 50 sender containers start cold at once',
  async run(ctx) {
    const gw = await startBenchGateway({ startSender: false, simulator: { tokenTtlSeconds: TOKEN_TTL_S } });
    const containers: SenderContainer[] = [];
    try {
      const sim = gw.stack.simulator;
      if (!sim) throw new Error('no simulator');
      const messages = Array.from({ length: 2 * CONTAINERS }, (_, i) =>
        textMessage(`storm ${ctx.runId} ${i}`, `storm${i}`),
      );
      const res = await gw.api.post('/v1/messages/batch', { messages });
      if (res.status !== 207) throw new Error(`batch answered ${res.status}`);
      const event = await receiveAll(gw.stack, 'normal', 2 * CONTAINERS);
      if (event.Records.length !== 2 * CONTAINERS)
        throw new Error(`received ${event.Records.length} of ${2 * CONTAINERS} records`);
      containers.push(
        ...(await Promise.all(Array.from({ length: CONTAINERS }, () => senderContainer(gw.stack)))),
      );

      ctx.log(`${CONTAINERS} cold containers invoked at once`);
      const cold = await Promise.all(
        containers.map((c, i) => c.invoke({ Records: [event.Records[i] as never] })),
      );
      const coldCalls = sim.stats().gettokenCalls;
      const firstFetch = sim.requests().find((r) => r.path.endsWith('/gettoken'))?.at ?? Date.now();

      // Wait until the token expired for everyone, then invoke all 50 again at once.
      const staleAt = firstFetch + TOKEN_TTL_S * 1000 + 500;
      ctx.log(`waiting ${Math.max(0, staleAt - Date.now())} ms for the token's lifetime to end`);
      await sleep(Math.max(0, staleAt - Date.now()));
      const warm = await Promise.all(
        containers.map((c, i) => c.invoke({ Records: [event.Records[CONTAINERS + i] as never] })),
      );
      const refreshCalls = sim.stats().gettokenCalls - coldCalls;
      const failures = [...cold, ...warm].flatMap((r) => r.batchItemFailures).length;
      const stats = sim.stats();
      return {
        rows: [
          {
            metric: 'gettoken calls, 50 cold senders at once',
            measured: String(coldCalls),
            target: 'exactly 1',
            pass: coldCalls === 1,
            value: coldCalls,
          },
          {
            metric: 'gettoken calls for the next token lifetime, 50 warm senders',
            measured: String(refreshCalls),
            target: 'exactly 1',
            pass: refreshCalls === 1,
            value: refreshCalls,
          },
        ],
        details: {
          containers: CONTAINERS,
          tokenTtlSeconds: TOKEN_TTL_S,
          coldGettokenCalls: coldCalls,
          refreshGettokenCalls: refreshCalls,
          delivered: stats.delivered,
          batchItemFailures: failures,
        },
        notes: [
          `token: ${CONTAINERS} fresh containers, one record each, invoked together; then the same ${CONTAINERS} again, together, after the token's lifetime (${TOKEN_TTL_S} s in the simulator) ended. Delivered ${stats.delivered}/${2 * CONTAINERS}, batch item failures ${failures}.`,
        ],
      };
    } finally {
      await Promise.all(containers.map((c) => c.close().catch(() => undefined)));
      await gw.stop();
    }
  },
};
