import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoPauseStore } from '#lib/store/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoPauseStore (dynalite)', () => {
  let table: UnitTable;
  let nowMs = Date.parse('2026-12-01T08:00:00Z');
  let store: DynamoPauseStore;

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoPauseStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  it('reports the pause until its end, then nothing', async () => {
    const app = uniqueId('app');
    const until = nowMs + 60_000;

    await store.pause(app, until, '45009');
    const during = await store.pausedUntil(app);
    nowMs = until;
    const after = await store.pausedUntil(app);

    expect(during).toBe(until);
    expect(after).toBeUndefined();
  });

  it('reports nothing for an app that was never paused', async () => {
    expect(await store.pausedUntil(uniqueId('app'))).toBeUndefined();
  });
});
