import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, DynamoTokenStore } from '#lib/store/index.js';
import { receiveAll, type SenderContainer, senderContainer } from '#local/harness/sender.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

describe('token cache on the local stack', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ startSender: false, simulator: { latencyMs: 20 } });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('calls gettoken exactly once when 50 cold sender containers start at once', async () => {
    for (let i = 0; i < 50; i++)
      expect((await gw.post('/v1/messages', text(`storm ${i}`, `user${i}`))).status).toBe(202);
    const event = await receiveAll(gw.stack, 'normal', 50);
    expect(event.Records).toHaveLength(50);
    const containers: SenderContainer[] = await Promise.all(
      Array.from({ length: 50 }, () => senderContainer(gw.stack)),
    );

    const results = await Promise.all(
      containers.map((c, i) => c.invoke({ Records: [event.Records[i] as never] })),
    );

    expect(results.flatMap((r) => r.batchItemFailures)).toEqual([]);
    const stats = gw.stack.simulator?.stats();
    expect(stats?.gettokenCalls).toBe(1);
    expect(stats?.delivered).toBe(50);
    await Promise.all(containers.map((c) => c.close()));
  });

  it('lets another container take over after a crashed lock holder’s lease runs out', async () => {
    const app = gw.stack.config.apps.ops;
    if (!app) throw new Error('no app');
    // Forget the token from the first test, then crash a "holder": take the lock and never write or release it.
    gw.stack.simulator?.invalidateTokens();
    const db = createDocumentClient('test');
    const store = new DynamoTokenStore(db, gw.stack.env.tableName);
    const stored = (await store.get(app.corpId, app.agentId)).token;
    if (stored) await store.invalidate(app.corpId, app.agentId, stored.token);
    expect(await store.acquireLock(app.corpId, app.agentId, 'crashed-holder', 1_500)).toBe(true);
    const before = gw.stack.simulator?.stats().gettokenCalls ?? 0;

    expect((await gw.post('/v1/messages', text('after the crash', 'lisi'))).status).toBe(202);
    const container = await senderContainer(gw.stack);
    const result = await container.invoke(await receiveAll(gw.stack, 'normal', 1));

    expect(result.batchItemFailures).toEqual([]);
    expect(gw.stack.simulator?.stats().gettokenCalls).toBe(before + 1);
    expect(gw.stack.simulator?.inbox('lisi')).toHaveLength(1);
    await container.close();
    db.destroy();
  });

  it('refreshes once when WeCom invalidates the token mid-run, and loses no message', async () => {
    const container = await senderContainer(gw.stack);
    const sendBatch = async (from: number) => {
      for (let i = from; i < from + 10; i++) await gw.post('/v1/messages', text(`mid-run ${i}`, `mid${i}`));
      return container.invoke(await receiveAll(gw.stack, 'normal', 10));
    };
    expect((await sendBatch(0)).batchItemFailures).toEqual([]);
    const before = gw.stack.simulator?.stats().gettokenCalls ?? 0;

    gw.stack.simulator?.invalidateTokens(); // every issued token now answers 42001
    const after = await sendBatch(10);

    expect(after.batchItemFailures).toEqual([]);
    expect(gw.stack.simulator?.stats().gettokenCalls).toBe(before + 1);
    await waitFor(() =>
      Array.from({ length: 20 }, (_, i) => gw.stack.simulator?.inbox(`mid${i}`).length).every((n) => n === 1),
    );
    await container.close();
  });
});
