import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { queueDepth } from '#local/harness/sender.js';
import { type JsonBody, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

const TERMINAL = ['sent', 'failed', 'dead'];
const LANE_VISIBILITY_SECONDS = 10;

interface Posted {
  content: string;
  member: string;
  /** When the client sent it (epoch ms). */
  sentAt: number;
  status: number;
  id?: string;
  key?: string;
}

/** Status counts of the POSTs, for failure messages. */
const summarize = (posted: readonly Posted[]): string => {
  const counts: Record<number, number> = {};
  for (const p of posted) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return JSON.stringify(counts);
};

/**
 * The AWS services under the gateway restart while it runs (SPEC non-negotiable: faults lose no accepted message).
 * SQS and then DynamoDB go down — listener closed, open connections reset — and come back on the same endpoint with
 * their data, while clients keep posting and the sender keeps delivering. Every POST must end as 202 (accepted) or
 * 503 (rejected, retry), never another 5xx; every accepted message must be delivered, and exactly once.
 */
describe('emulator restarts under load', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stack.stop();
    gw = undefined;
  });

  it('loses no accepted message and delivers none twice when SQS and then DynamoDB restart mid-run', {
    timeout: 240_000,
  }, async () => {
    gw = await startTestGateway({
      restartableEmulators: true,
      simulator: { latencyMs: 20 },
      runtime: { retry: { baseSeconds: 1, capSeconds: 2 }, deferJitterSeconds: 0 },
    });
    // A receive whose answer the SQS restart cuts off leaves its messages invisible for the lane's visibility
    // timeout, as in AWS (180 s in the shared definitions). Shortened here so that case settles within the test.
    for (const lane of ['high', 'normal'] as const) {
      await gw.stack.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: gw.stack.resources.queueUrls[lane],
          Attributes: { VisibilityTimeout: String(LANE_VISIBILITY_SECONDS) },
        }),
      );
    }
    const api = gw;
    const posted: Posted[] = [];
    let stopLoad = false;
    const post = async (i: number) => {
      const content = `restart ${i}`;
      const member = `m${i % 25}`;
      // Every fourth client makes its POST retry-safe with an Idempotency-Key.
      const key = i % 4 === 0 ? `restart-key-${i}` : undefined;
      const sentAt = Date.now();
      const res = await api
        .post('/v1/messages', text(content, member), key ? { 'idempotency-key': key } : {})
        .catch(() => ({ status: 0, body: {} }));
      posted.push({
        content,
        member,
        sentAt,
        status: res.status,
        ...(res.body?.id ? { id: res.body.id } : {}),
        ...(key ? { key } : {}),
      });
    };
    // Status queries run alongside: during an outage they answer 503, never another 5xx.
    const getStatuses = new Map<number, number>();
    const reader = (async () => {
      while (!stopLoad) {
        const last = posted.findLast((p) => p.id);
        if (last) {
          const res = await api.get(`/v1/messages/${last.id}`).catch(() => ({ status: 0 }));
          getStatuses.set(res.status, (getStatuses.get(res.status) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    // Clients post two messages every 50 ms for the whole run (without waiting for answers) ...
    const inFlight: Promise<void>[] = [];
    const load = (async () => {
      for (let i = 0; !stopLoad && i < 4_000; i += 2) {
        inFlight.push(post(i), post(i + 1));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // ... while SQS and then DynamoDB restart under them, each down for 1.5 s.
    await new Promise((r) => setTimeout(r, 1_000));
    await gw.stack.restartEmulator('sqs', 1_500);
    await new Promise((r) => setTimeout(r, 1_500));
    await gw.stack.restartEmulator('dynamodb', 1_500);
    const dynamoBack = Date.now();
    // ... and go on posting until traffic gets through again: POSTs sent after DynamoDB came back are accepted,
    // and 50 in all. A bounded wait, not a fixed pause: how soon that happens depends on the emulator (dynalite
    // at once; DynamoDB Local's JVM takes seconds to answer quickly again, many on a busy machine).
    const accepted = () => posted.filter((p) => p.status === 202);
    await waitFor(
      () => accepted().length >= 50 && accepted().some((p) => p.sentAt >= dynamoBack),
      60_000,
      () => `traffic did not get through again after the restarts: ${summarize(posted)}`,
    );
    stopLoad = true;
    await Promise.all([load, reader]);
    await Promise.all(inFlight);
    expect([...getStatuses.keys()].filter((st) => st !== 200 && st !== 503)).toEqual([]);

    // Rejections during the outages are 503s (the client retries); nothing else than 202 or 503. In particular no
    // 500: a request that waits for an emulator stops at the function's deadline and answers 503 itself.
    expect(
      posted.map((p) => p.status).filter((s) => s !== 202 && s !== 503),
      summarize(posted),
    ).toEqual([]);
    // The outages did bite (some rejected); traffic got through around them (the wait above).
    expect(posted.filter((p) => p.status === 503).length, summarize(posted)).toBeGreaterThan(0);
    // Clients with an Idempotency-Key retry their 503s with the same key until accepted, as a real client would
    // (when the outage kept the gateway from freeing the key, the retry is answered 503 until the first request
    // has certainly ended, ~15 s, and then takes the key over). Their message must then arrive exactly once.
    // Each client retries on its own, so they run side by side.
    const retried = posted.filter((x) => x.key && x.status === 503);
    await Promise.all(
      retried.map(async (p) => {
        let retry = { status: 0, body: undefined as JsonBody };
        for (let attempt = 0; attempt < 30 && retry.status !== 202; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, 1_000));
          retry = await api.post('/v1/messages', text(p.content, p.member), {
            'idempotency-key': p.key as string,
          });
        }
        expect(retry.status, `${p.content}: ${JSON.stringify(retry.body)}`).toBe(202);
        Object.assign(p, { status: 202, id: retry.body.id });
      }),
    );
    const delivered = accepted();

    // Every accepted message reaches a terminal status ...
    const sim = gw.stack.simulator;
    const received = (p: Posted) =>
      (sim?.inbox(p.member) ?? []).filter((m) => (m.payload as { content?: string }).content === p.content)
        .length;
    const finalStatus = new Map<string, string>();
    const pending = new Map<string, unknown>();
    await waitFor(
      async () => {
        for (const p of delivered) {
          const id = p.id as string;
          if (finalStatus.has(id)) continue;
          const res = await api.get(`/v1/messages/${id}`);
          if (TERMINAL.includes(res.body?.status)) {
            finalStatus.set(id, res.body.status);
            pending.delete(id);
          } else pending.set(id, { ...res.body, received: received(p) });
        }
        return finalStatus.size === delivered.length;
      },
      60_000,
      () =>
        `${pending.size} of ${delivered.length} accepted messages not terminal: ${JSON.stringify([...pending.values()].slice(0, 3))}`,
    );
    // ... and it is `sent`, and its member received it exactly once.
    expect([...finalStatus.values()].filter((s) => s !== 'sent')).toEqual([]);
    expect(delivered.filter((p) => received(p) !== 1).map((p) => `${p.content}: ${received(p)}×`)).toEqual(
      [],
    );
    // Rejected messages never reached anyone (their records were failed or never written).
    expect(posted.filter((p) => p.status !== 202 && received(p) > 0).map((p) => p.content)).toEqual([]);
    expect(sim?.drops()).toEqual([]);
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(0);
  });
});
