import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoTokenStore, keys } from '#lib/store/index.js';
import type { TokenFailure } from '#lib/wecom/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoTokenStore (dynalite)', () => {
  let table: UnitTable;
  let nowMs = Date.parse('2026-12-01T08:00:00Z');
  const clock = () => nowMs;
  let store: DynamoTokenStore;

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoTokenStore(table.db, table.tableName, clock);
  });
  afterAll(async () => {
    await table.stop();
  });

  /** Each test uses its own corp so the shared table never leaks state between tests. */
  const corp = () => uniqueId('ww');

  it('returns the token it stored', async () => {
    const corpId = corp();
    const token = { token: 'T1', expiresAtMs: nowMs + 7_200_000 };

    await store.put(corpId, 1000002, token);

    expect(await store.get(corpId, 1000002)).toEqual({ token });
    expect(await store.get(corpId, 1000003)).toEqual({});
  });

  it('treats a token past its expiry as absent', async () => {
    const corpId = corp();
    await store.put(corpId, 1, { token: 'T1', expiresAtMs: nowMs + 1_000 });

    const before = await store.get(corpId, 1);
    nowMs += 1_000;
    const after = await store.get(corpId, 1);

    expect(before.token?.token).toBe('T1');
    expect(after).toEqual({});
  });

  it('lets exactly one of 20 concurrent acquirers take the lock', async () => {
    const corpId = corp();

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.acquireLock(corpId, 1, `owner-${i}`, 10_000)),
    );

    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('lets another owner take the lock over once the lease has passed, not before', async () => {
    const corpId = corp();
    await store.acquireLock(corpId, 1, 'dead-holder', 10_000);

    nowMs += 9_999;
    const tooEarly = await store.acquireLock(corpId, 1, 'rescuer', 10_000);
    nowMs += 2;
    const afterLease = await store.acquireLock(corpId, 1, 'rescuer', 10_000);

    expect(tooEarly).toBe(false);
    expect(afterLease).toBe(true);
  });

  it('releases the lock only for its owner', async () => {
    const corpId = corp();
    await store.acquireLock(corpId, 1, 'holder', 10_000);

    await store.releaseLock(corpId, 1, 'intruder');
    const whileHeld = await store.acquireLock(corpId, 1, 'other', 10_000);
    await store.releaseLock(corpId, 1, 'holder');
    const afterRelease = await store.acquireLock(corpId, 1, 'other', 10_000);

    expect(whileHeld).toBe(false);
    expect(afterRelease).toBe(true);
  });

  it('does nothing when releasing a lock nobody holds', async () => {
    await expect(store.releaseLock(corp(), 1, 'anyone')).resolves.toBeUndefined();
  });

  it('invalidates the stored token only when it is the failing one', async () => {
    const corpId = corp();
    await store.put(corpId, 1, { token: 'NEW', expiresAtMs: nowMs + 7_200_000 });

    await store.invalidate(corpId, 1, 'OLD');
    const afterStale = await store.get(corpId, 1);
    await store.invalidate(corpId, 1, 'NEW');
    const afterMatching = await store.get(corpId, 1);

    expect(afterStale.token?.token).toBe('NEW');
    expect(afterMatching).toEqual({});
  });

  const failure = (over: Partial<TokenFailure> = {}): TokenFailure => ({
    errclass: 'config',
    errcode: 40001,
    errmsg: 'invalid credential',
    retryAtMs: nowMs + 60_000,
    count: 1,
    secretHash: 'abcd',
    atMs: nowMs,
    ...over,
  });

  it('remembers a gettoken failure next to a still-valid token, and forgets it with the next token', async () => {
    const corpId = corp();
    const token = { token: 'T1', expiresAtMs: nowMs + 200_000 };
    await store.put(corpId, 1, token);

    await store.recordFailure(corpId, 1, failure());
    const both = await store.get(corpId, 1);
    await store.invalidate(corpId, 1, 'T1');
    const failureOnly = await store.get(corpId, 1);
    await store.put(corpId, 1, { token: 'T2', expiresAtMs: nowMs + 7_200_000 });
    const fresh = await store.get(corpId, 1);

    expect(both).toEqual({ token, failure: failure() });
    expect(failureOnly).toEqual({ failure: failure() });
    expect(fresh).toEqual({ token: { token: 'T2', expiresAtMs: nowMs + 7_200_000 } });
  });

  it('counts its own lock as taken when the SDK retried a put whose first answer was lost (review L1)', async () => {
    const corpId = corp();
    // The first PutItem is applied, its answer lost; the SDK's retry then fails its own condition.
    const lostAnswer = {
      send: async (command: { constructor: { name: string } }) => {
        if (command.constructor.name !== 'PutCommand') return table.db.send(command as never);
        await table.db.send(command as PutCommand);
        const err = Object.assign(new Error('The conditional request failed'), {
          name: 'ConditionalCheckFailedException',
          $fault: 'client',
          $metadata: { attempts: 2, httpStatusCode: 400 },
        });
        throw err;
      },
    };
    const flaky = new DynamoTokenStore(lostAnswer as never, table.tableName, clock);

    expect(await flaky.acquireLock(corpId, 1, 'me', 10_000)).toBe(true);
    expect(await flaky.acquireLock(corpId, 1, 'someone-else', 10_000)).toBe(false);
  });

  it('reads an item without a token but with a failure (written by recordFailure alone)', async () => {
    const corpId = corp();
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.token(corpId, 1), failure: failure(), expiresAt: nowMs / 1000 + 86_400 },
      }),
    );

    expect(await store.get(corpId, 1)).toEqual({ failure: failure() });
  });

  it('does nothing when invalidating a token that is not stored', async () => {
    await expect(store.invalidate(corp(), 1, 'GONE')).resolves.toBeUndefined();
  });
});
