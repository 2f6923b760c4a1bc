import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_ACCESS } from '#lib/resources/index.js';
import { startTestGateway, type TestGateway, text } from '#test/helpers/gateway.js';

/**
 * Least privilege must still let the code work: every DynamoDB operation a function is seen making on the wire
 * (counted per function by the local stack) must be one that FUNCTION_ACCESS — and so the CDK stack — grants it.
 * The scenario walks the paths that use the less common operations: idempotent replays, recall after WeCom
 * invalidated the token (lock, delete), retries, 45009 pauses, deferrals and first-delivery batch writes.
 */
describe('IAM grants cover what the functions really call', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      runtime: { retry: { baseSeconds: 1, capSeconds: 1 }, rateLimitPauseMs: 1_000, deferJitterSeconds: 0 },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('observes only granted DynamoDB operations per function', async () => {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    const first = await gw.post('/v1/messages', text('granted?', 'perm-1'), {
      'idempotency-key': 'perm-key-1',
    });
    await gw.post('/v1/messages', text('granted?', 'perm-1'), { 'idempotency-key': 'perm-key-1' });
    await gw.waitForStatus(first.body.id, ['sent']);

    sim.invalidateTokens();
    expect((await gw.post(`/v1/messages/${first.body.id}/recall`, {})).status).toBe(200);

    sim.faults.script([{ errcode: -1 }, { errcode: 45009 }]);
    const retried = await gw.post('/v1/messages', text('retried then paused', 'perm-2'));
    await gw.waitForStatus(retried.body.id, ['sent'], 30_000);

    const observed = gw.stack.dynamoRequests.counts();
    for (const fn of ['ingest', 'sender'] as const) {
      const granted: readonly string[] = FUNCTION_ACCESS[fn].table;
      expect({
        fn,
        ungranted: Object.keys(observed[fn] ?? {}).filter((op) => !granted.includes(op)),
      }).toEqual({
        fn,
        ungranted: [],
      });
    }
    // The scenario really reached the operations that are easy to forget.
    expect(observed.ingest).toHaveProperty('DeleteItem');
    expect(observed.sender).toHaveProperty('BatchWriteItem');
    expect(observed.sender).toHaveProperty('DeleteItem');
  });
});
