import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import type { CounterStates, QuotaKey } from '#lib/quota/index.js';
import {
  bestSlot,
  bestSlots,
  blindSlot,
  callsSpec,
  emptyPool,
  memberSpec,
  type PoolState,
  personTimesSpec,
  type SlotPlan,
  WECOM_WINDOWS,
} from '#lib/quota/index.js';
import { DynamoQuotaStore, keys } from '#lib/store/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');
const EXPIRES = NOW + 7_200_000;
const quota = { ...QUOTA_DEFAULTS };
const member = memberSpec(quota, WECOM_WINDOWS);
const fresh = (): Record<'n' | 'h', PoolState> => ({ n: emptyPool(), h: emptyPool() });
const on = (counter: string, plan: SlotPlan | undefined) => ({ ...(plan as SlotPlan), counter });

describe('DynamoQuotaStore (dynalite)', () => {
  let table: UnitTable;
  let store: DynamoQuotaStore;

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoQuotaStore(table.db, table.tableName);
  });
  afterAll(async () => {
    await table.stop();
  });

  const memberKey = (): QuotaKey => ({ app: uniqueId('app'), kind: 'member', member: 'zhangsan' });

  it('grants one of 20 concurrent reservations planned for an idle key, and tells the others the item', async () => {
    const key = memberKey();
    const plan = on('m', bestSlot(fresh(), member, 'normal', { amount: 1, notBeforeMs: NOW }));

    const answers = await Promise.all(Array.from({ length: 20 }, () => store.reserve(key, [plan], EXPIRES)));

    expect(answers.filter((a) => a.ok)).toHaveLength(1);
    // Everyone leaves with the item as it is: the next free slot one pace (60 s ÷ 19) later.
    for (const a of answers)
      expect(a.state.m?.n).toMatchObject({ cum: 1, tat: NOW + (plan.pace?.spanMs ?? 0) });
  });

  it('tells a refused reservation the item as it stands, read only where the engine does not return it', async () => {
    const key = memberKey();
    const plan = on('m', bestSlot(fresh(), member, 'normal', { amount: 1, notBeforeMs: NOW }));
    await store.reserve(key, [plan], EXPIRES);
    const sent: string[] = [];
    const counting = new DynamoQuotaStore(
      {
        send: ((command: { constructor: { name: string } }, ...rest: unknown[]) => {
          sent.push(command.constructor.name);
          return (table.db.send as (...a: unknown[]) => unknown)(command, ...rest);
        }) as typeof table.db.send,
      },
      table.tableName,
    );

    // The same plan again: the slot it names is taken.
    const refused = await counting.reserve(key, [plan], EXPIRES);

    expect(refused.ok).toBe(false);
    expect(refused.state.m?.n).toMatchObject({ cum: 1, tat: NOW + (plan.pace?.spanMs ?? 0) });
    // DynamoDB (and DynamoDB Local) return the item with the refusal (ReturnValuesOnConditionCheckFailure); dynalite
    // does not, and pays a GetItem.
    const dynamoLocal = process.env.DYNAMO_ENGINE === 'dynamodb-local';
    expect(sent).toEqual(dynamoLocal ? ['UpdateCommand'] : ['UpdateCommand', 'GetCommand']);
  });

  it('grants every concurrent append on a busy key, each its own slot a pace apart', async () => {
    const key = memberKey();
    const { state } = await store.reserve(
      key,
      [on('m', bestSlot(fresh(), member, 'high', { amount: 1, notBeforeMs: NOW }))],
      EXPIRES,
    );
    const busy = on(
      'm',
      bestSlot(state.m as Record<'n' | 'h', PoolState>, member, 'normal', { amount: 1, notBeforeMs: NOW }),
    );

    const answers = await Promise.all(Array.from({ length: 5 }, () => store.reserve(key, [busy], EXPIRES)));

    expect(busy.pace?.mode).toBe('append');
    expect(answers.every((a) => a.ok)).toBe(true);
    const pace = member.pools.n.paceMs as number;
    const tats = answers.map((a) => a.state.m?.n.tat).sort((a, b) => (a as number) - (b as number));
    expect(tats).toEqual([2, 3, 4, 5, 6].map((k) => NOW + k * pace));
  });

  it('stores what lib/quota plans: count, slot, bucket, snapshot, ceiling; and removes stale snapshots', async () => {
    const key = memberKey();
    const first = on('m', bestSlot(fresh(), member, 'normal', { amount: 1, notBeforeMs: NOW }));
    const { state } = await store.reserve(key, [first], EXPIRES);
    const later = NOW + 2 * WECOM_WINDOWS.hourMs;
    const second = on(
      'm',
      bestSlot(state.m as Record<'n' | 'h', PoolState>, member, 'normal', { amount: 1, notBeforeMs: later }),
    );

    const after = await store.reserve(key, [second], EXPIRES);

    expect(second.dropBuckets).toEqual([]); // the only snapshot is the one a look-back still needs
    expect(after.ok).toBe(true);
    expect(after.state.m?.n).toMatchObject({
      cum: 2,
      last: second.bucket,
      tat: second.slotMs + (second.pace?.spanMs ?? 0),
      ceil: second.ceil,
    });
    // DynamoDB keeps no order in a map: compare the snapshots sorted by bucket.
    expect([...(after.state.m?.n.snaps.entries() ?? [])].sort(([a], [b]) => a - b)).toEqual([
      [first.bucket, 1],
      [second.bucket, 2],
    ]);
    const third = on(
      'm',
      bestSlot(after.state.m as Record<'n' | 'h', PoolState>, member, 'normal', {
        amount: 1,
        notBeforeMs: later + 3 * WECOM_WINDOWS.hourMs,
      }),
    );
    expect(third.dropBuckets).toEqual([first.bucket]);
    const item = (await store.reserve(key, [third], EXPIRES)).state;
    expect([...(item.m?.n.snaps.keys() ?? [])].sort((a, b) => a - b)).toEqual([second.bucket, third.bucket]);
  });

  it('grants a blind reservation on a new key and on an idle one, and refuses one while the slot is taken', async () => {
    const key = memberKey();

    const first = await store.reserve(key, [on('m', blindSlot(member, NOW))], EXPIRES);
    const tooSoon = await store.reserve(key, [on('m', blindSlot(member, NOW + 1_000))], EXPIRES);
    const idle = await store.reserve(key, [on('m', blindSlot(member, NOW + 60_000))], EXPIRES);

    expect([first.ok, tooSoon.ok, idle.ok]).toEqual([true, false, true]);
    expect(idle.state.m?.n).toMatchObject({
      cum: 2,
      ceil: member.pools.n.limit,
      ceilLimit: member.pools.n.limit,
    });
  });

  it('refuses a blind reservation once the ceiling is reached, and one made with another limit', async () => {
    const key = memberKey();
    const small = memberSpec(
      { ...quota, perMemberPerHour: 3, normalShare: 1, safetyMargin: 0 },
      WECOM_WINDOWS,
    );
    let state: CounterStates = {};
    for (let i = 0; i < 3; i++) {
      const pools = (state.m ?? fresh()) as Record<'n' | 'h', PoolState>;
      ({ state } = await store.reserve(
        key,
        [on('m', bestSlot(pools, small, 'normal', { amount: 1, notBeforeMs: NOW + i * 60_000 }))],
        EXPIRES,
      ));
    }

    const full = await store.reserve(key, [on('m', blindSlot(small, NOW + 300_000))], EXPIRES);
    const otherLimit = await store.reserve(key, [on('m', blindSlot(member, NOW + 300_000))], EXPIRES);

    expect(state.m?.n.cum).toBe(3);
    expect(full.ok).toBe(false);
    expect(otherLimit.ok).toBe(false);
  });

  it('applies the reservations of one item all together or not at all', async () => {
    const key: QuotaKey = { app: uniqueId('app'), kind: 'app' };
    const day = personTimesSpec({ ...quota, perDay: 10 }, WECOM_WINDOWS);
    const calls = callsSpec(quota, WECOM_WINDOWS);
    const { state: before } = await store.reserve(
      key,
      [on('d', bestSlot(fresh(), day, 'normal', { amount: 1, notBeforeMs: NOW }))],
      EXPIRES,
    );
    const stale = (bestSlots(fresh(), day, 'high', { amount: 8, notBeforeMs: NOW }) ?? []).map((p) => ({
      ...p,
      counter: 'd',
    }));

    const refused = await store.reserve(
      key,
      [on('c', bestSlot(fresh(), calls, 'high', { amount: 5, notBeforeMs: NOW })), ...stale],
      EXPIRES,
    );
    // Planned as if the day were unused: its condition fails, so the calls are not counted either.
    expect(refused.ok).toBe(false);
    expect(refused.state).toEqual(before);
    expect(refused.state.c).toBeUndefined();
    const day2 = (
      bestSlots(before.d as Record<'n' | 'h', PoolState>, day, 'high', { amount: 7, notBeforeMs: NOW }) ?? []
    ).map((p) => ({
      ...p,
      counter: 'd',
    }));
    const both = await store.reserve(
      key,
      [on('c', bestSlot(fresh(), calls, 'high', { amount: 5, notBeforeMs: NOW })), ...day2],
      EXPIRES,
    );
    expect(both.ok).toBe(true);
    expect(both.state.c?.n.cum).toBe(5);
    // 8 allowed a day: normal's share (6) first, high's own (2) for the rest.
    expect([both.state.d?.n.cum, both.state.d?.h.cum]).toEqual([6, 2]);
  });

  it('gives a paced slot back only while nobody reserved after it', async () => {
    const key = memberKey();
    const plan = on('m', bestSlot(fresh(), member, 'normal', { amount: 1, notBeforeMs: NOW }));
    const span = plan.pace?.spanMs ?? 0;
    await store.reserve(key, [plan], EXPIRES);
    const slot = { counter: 'm', pool: 'n' as const, fromTat: NOW + span, toTat: NOW };

    expect((await store.giveBack(key, slot))?.m?.n).toMatchObject({ tat: NOW, cum: 1 });
    // Given back once: the same slot again changes nothing.
    expect(await store.giveBack(key, slot)).toBeUndefined();

    const { state } = await store.reserve(
      key,
      [on('m', bestSlot(fresh(), member, 'normal', { amount: 1, notBeforeMs: NOW }))],
      EXPIRES,
    );
    const later = on(
      'm',
      bestSlot(state.m as Record<'n' | 'h', PoolState>, member, 'normal', { amount: 1, notBeforeMs: NOW }),
    );
    await store.reserve(key, [later], EXPIRES);
    // The first of two slots cannot go back: the second was handed out after it.
    expect(await store.giveBack(key, slot)).toBeUndefined();
    expect((await store.read(key)).m?.n.tat).toBe(NOW + 2 * span);
  });

  it('keeps one item per case-folded member with a TTL', async () => {
    const key = memberKey();
    await store.reserve(key, [on('m', blindSlot(member, NOW))], EXPIRES);

    const item = (
      await table.db.send(
        new GetCommand({ TableName: table.tableName, Key: keys.quota(key.app, 'member#zhangsan') }),
      )
    ).Item;

    expect(item).toMatchObject({ mnc: 1, expiresAt: Math.floor(EXPIRES / 1000) });
  });
});
