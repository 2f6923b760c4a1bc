import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_ACCESS } from '#lib/resources/index.js';
import { startTestGateway, type TestGateway, text } from '#test/helpers/gateway.js';

/**
 * Least privilege must still let the code work: every DynamoDB operation a function is seen making on the wire
 * (counted per function by the local stack) must be one that FUNCTION_ACCESS — and so the CDK stack — grants it.
 * Likewise every WeCom API a function is seen calling (the simulator logs the caller's user-agent) must be listed
 * there, since that list is what puts a function behind the trusted IP in AWS.
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

  it('observes only declared WeCom calls per function, so each caller gets the trusted IP', () => {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    const calls = new Map<string, Set<string>>();
    for (const r of sim.requests()) {
      const caller = r.userAgent ?? '(none)';
      calls.set(caller, (calls.get(caller) ?? new Set()).add(r.path.replace(/^\/cgi-bin\//, '')));
    }
    const declared = Object.fromEntries(
      Object.entries(FUNCTION_ACCESS).map(([fn, access]) => [
        `wecom-gateway/${fn}`,
        access.wecom as readonly string[],
      ]),
    );
    const undeclared = [...calls].flatMap(([caller, paths]) =>
      [...paths].filter((p) => !declared[caller]?.includes(p)).map((p) => `${caller} → ${p}`),
    );
    expect(undeclared).toEqual([]);
    // The scenario above made ingest call WeCom itself: its recall, and the token WeCom had invalidated.
    expect([...(calls.get('wecom-gateway/ingest') ?? [])].sort()).toEqual(['gettoken', 'message/recall']);
  });
});
