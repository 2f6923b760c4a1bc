import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoQuotaStore, keys } from '#lib/store/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoQuotaStore (dynalite)', () => {
  let table: UnitTable;
  let store: DynamoQuotaStore;
  const nowMs = Date.parse('2026-12-01T08:00:00Z');
  const expiresAtMs = nowMs + 120_000;
  const limits = { perMinute: 3, perHour: 5 };

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoQuotaStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  const used = async (app: string, scope: string, window: number) =>
    (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keys.quota(app, scope, window) })))
      .Item?.used;

  it('grants exactly 50 of 200 concurrent reservations of 1 against a limit of 50', async () => {
    const app = uniqueId('app');

    const results = await Promise.all(
      Array.from({ length: 200 }, () => store.reserve(app, 'app-minute', 7, 1, 50, expiresAtMs)),
    );

    expect(results.filter(Boolean)).toHaveLength(50);
    expect(await used(app, 'app-minute', 7)).toBe(50);
  });

  it('grants a block only if all of it fits under the limit', async () => {
    const app = uniqueId('app');

    const first = await store.reserve(app, 'app-day', 1, 40, 50, expiresAtMs);
    const tooBig = await store.reserve(app, 'app-day', 1, 11, 50, expiresAtMs);
    const exact = await store.reserve(app, 'app-day', 1, 10, 50, expiresAtMs);

    expect([first, tooBig, exact]).toEqual([true, false, true]);
    expect(await used(app, 'app-day', 1)).toBe(50);
  });

  it('refuses an amount above the limit without a request', async () => {
    const app = uniqueId('app');

    expect(await store.reserve(app, 'app-minute', 1, 51, 50, expiresAtMs)).toBe(false);
    expect(await used(app, 'app-minute', 1)).toBeUndefined();
  });

  it('keeps separate windows apart', async () => {
    const app = uniqueId('app');
    await store.reserve(app, 'app-minute', 1, 50, 50, expiresAtMs);

    expect(await store.reserve(app, 'app-minute', 2, 1, 50, expiresAtMs)).toBe(true);
  });

  it('gives a released amount back to the window', async () => {
    const app = uniqueId('app');
    await store.reserve(app, 'app-minute', 1, 50, 50, expiresAtMs);

    await store.release(app, 'app-minute', 1, 20);

    expect(await used(app, 'app-minute', 1)).toBe(30);
    expect(await store.reserve(app, 'app-minute', 1, 20, 50, expiresAtMs)).toBe(true);
  });

  it('does not create a counter when releasing into a window that was never reserved', async () => {
    const app = uniqueId('app');

    await store.release(app, 'app-minute', 1, 5);

    expect(await used(app, 'app-minute', 1)).toBeUndefined();
  });

  it('enforces the per-member minute limit and reports "minute"', async () => {
    const app = uniqueId('app');

    const verdicts = [];
    for (let i = 0; i < 4; i++)
      verdicts.push(await store.reserveMember(app, 'alice', 10, 0, limits, expiresAtMs));

    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'minute']);
  });

  it('enforces the per-member hour limit across minutes in one item and reports "hour"', async () => {
    const app = uniqueId('app');

    const verdicts = [];
    for (const minute of [0, 0, 0, 1, 1, 2]) {
      verdicts.push(await store.reserveMember(app, 'bob', 10, minute, limits, expiresAtMs));
    }

    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'hour']);
    const item = (
      await table.db.send(
        new GetCommand({ TableName: table.tableName, Key: keys.memberQuota(app, 'bob', 10) }),
      )
    ).Item;
    expect(item).toMatchObject({ hour: 5, m0: 3, m1: 2 });
  });

  it('keeps members apart', async () => {
    const app = uniqueId('app');
    for (let i = 0; i < 3; i++) await store.reserveMember(app, 'carol', 10, 0, limits, expiresAtMs);

    expect(await store.reserveMember(app, 'dave', 10, 0, limits, expiresAtMs)).toBe('ok');
  });

  it('never grants a member more than the minute limit under concurrency', async () => {
    const app = uniqueId('app');

    const verdicts = await Promise.all(
      Array.from({ length: 20 }, () =>
        store.reserveMember(app, 'erin', 10, 5, { perMinute: 3, perHour: 100 }, expiresAtMs),
      ),
    );

    expect(verdicts.filter((v) => v === 'ok')).toHaveLength(3);
  });

  it('gives a member reservation back', async () => {
    const app = uniqueId('app');
    for (let i = 0; i < 3; i++) await store.reserveMember(app, 'frank', 10, 0, limits, expiresAtMs);

    await store.releaseMember(app, 'frank', 10, 0);

    expect(await store.reserveMember(app, 'frank', 10, 0, limits, expiresAtMs)).toBe('ok');
  });

  it('reports the counter after each successful reservation, for the utilisation metric', async () => {
    const app = uniqueId('app');
    const seen: [string, number, number][] = [];
    const listening = new DynamoQuotaStore(
      table.db,
      table.tableName,
      () => nowMs,
      (_a, scope, u, limit) => seen.push([scope, u, limit]),
    );

    await listening.reserve(app, 'app-minute', 9, 5, 40, expiresAtMs);
    await listening.reserve(app, 'app-minute', 9, 5, 40, expiresAtMs);
    await listening.reserve(app, 'app-minute', 9, 35, 40, expiresAtMs); // refused: nothing reported

    expect(seen).toEqual([
      ['app-minute', 5, 40],
      ['app-minute', 10, 40],
    ]);
  });
});
