import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppPause, DynamoPauseStore, keys } from '#lib/store/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoPauseStore (dynalite)', () => {
  let table: UnitTable;
  const nowMs = Date.parse('2026-12-01T08:00:00Z');
  let store: DynamoPauseStore;
  const pause = (over: Partial<AppPause> = {}): AppPause => ({
    kind: 'config_error',
    untilMs: nowMs + 60_000,
    sinceMs: nowMs,
    level: 0,
    errcode: 40001,
    reason: 'errcode 40001 from gettoken',
    ...over,
  });

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoPauseStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  it('keeps a pause past its end (a later error of the run lengthens it), until a probe clears it', async () => {
    const app = uniqueId('app');
    await store.put(app, pause());

    expect(await store.get(app)).toEqual(pause());
    await store.clear(app, nowMs);
    expect(await store.get(app)).toBeUndefined();
  });

  it('reports nothing for an app that was never paused', async () => {
    expect(await store.get(uniqueId('app'))).toBeUndefined();
  });

  it('lets exactly one caller probe after the pause ended, and none before', async () => {
    const app = uniqueId('app');
    await store.put(app, pause());

    expect(await store.claimProbe(app, nowMs, nowMs + 30_000, nowMs + 1_000)).toBe(false); // still paused
    const claims = await Promise.all(
      Array.from({ length: 10 }, () => store.claimProbe(app, nowMs, nowMs + 90_000, nowMs + 60_000)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await store.get(app))?.probeUntilMs).toBe(nowMs + 90_000);
    // After the probe's lease, or once it is released, the next caller probes.
    expect(await store.claimProbe(app, nowMs, nowMs + 120_000, nowMs + 90_000)).toBe(true);
    await store.releaseProbe(app, nowMs);
    expect(await store.claimProbe(app, nowMs, nowMs + 130_000, nowMs + 91_000)).toBe(true);
  });

  it('never clears or probes a newer run than the caller knew', async () => {
    const app = uniqueId('app');
    await store.put(app, pause({ sinceMs: nowMs + 5 }));

    await store.clear(app, nowMs);
    expect(await store.claimProbe(app, nowMs, nowMs + 90_000, nowMs + 60_000)).toBe(false);
    expect(await store.get(app)).toMatchObject({ sinceMs: nowMs + 5 });
  });

  it('reads a pause written before runs existed as a 45009 pause of one minute', async () => {
    const app = uniqueId('app');
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.pause(app),
          untilMs: nowMs + 60_000,
          reason: 'errcode 45009',
          expiresAt: nowMs / 1000 + 120,
        },
      }),
    );

    expect(await store.get(app)).toEqual({
      kind: 'rate_limited',
      untilMs: nowMs + 60_000,
      sinceMs: nowMs,
      level: 0,
      reason: 'errcode 45009',
    });
  });
});
