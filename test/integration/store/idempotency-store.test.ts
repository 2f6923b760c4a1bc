import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoIdempotencyStore } from '#lib/store/index.js';
import { startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

describe('DynamoIdempotencyStore (dynalite)', () => {
  let table: UnitTable;
  let nowMs = Date.parse('2026-12-01T08:00:00Z');
  let store: DynamoIdempotencyStore;
  const DAY = 86_400_000;

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoIdempotencyStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  it('lets the first claim win and answers the second with the stored entry', async () => {
    const keyHash = uniqueId('key');
    const first = { bodyHash: 'body-a', messageId: 'msg_1' };

    const win = await store.claim('ci', keyHash, first, DAY);
    const again = await store.claim('ci', keyHash, { bodyHash: 'body-b', messageId: 'msg_2' }, DAY);

    expect(win).toEqual({ claimed: true });
    expect(again).toEqual({ claimed: false, existing: first });
  });

  it('keeps the same Idempotency-Key of different API keys apart', async () => {
    const keyHash = uniqueId('key');
    await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_1' }, DAY);

    expect(await store.claim('billing', keyHash, { bodyHash: 'a', messageId: 'msg_2' }, DAY)).toEqual({
      claimed: true,
    });
  });

  it('lets exactly one of 10 concurrent claims win', async () => {
    const keyHash = uniqueId('key');

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.claim('ci', keyHash, { bodyHash: 'a', messageId: `msg_${i}` }, DAY),
      ),
    );

    expect(results.filter((r) => r.claimed)).toHaveLength(1);
  });

  it('lets a claim win again once the entry has expired', async () => {
    const keyHash = uniqueId('key');
    await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_old' }, DAY);

    nowMs += DAY;
    const later = await store.claim('ci', keyHash, { bodyHash: 'b', messageId: 'msg_new' }, DAY);
    const next = await store.claim('ci', keyHash, { bodyHash: 'c', messageId: 'msg_3' }, DAY);

    expect(later).toEqual({ claimed: true });
    expect(next).toEqual({ claimed: false, existing: { bodyHash: 'b', messageId: 'msg_new' } });
  });

  it('forgets a claim released by its message, but not one released by another message', async () => {
    const keyHash = uniqueId('key');
    await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_1' }, DAY);

    await store.release('ci', keyHash, 'msg_other');
    const afterForeign = await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_2' }, DAY);
    await store.release('ci', keyHash, 'msg_1');
    const afterOwn = await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_3' }, DAY);

    expect(afterForeign.claimed).toBe(false);
    expect(afterOwn).toEqual({ claimed: true });
  });
  it('marks only its own claim accepted, and a marked claim is read back accepted', async () => {
    const keyHash = uniqueId('key');
    await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_1' }, DAY);

    await store.markAccepted('ci', keyHash, 'msg_other');
    const before = await store.read('ci', keyHash);
    await store.markAccepted('ci', keyHash, 'msg_1');
    const after = await store.claim('ci', keyHash, { bodyHash: 'a', messageId: 'msg_2' }, DAY);
    await store.markAccepted('ci', uniqueId('missing'), 'msg_1');

    expect(before).toEqual({ bodyHash: 'a', messageId: 'msg_1' });
    expect(after).toEqual({
      claimed: false,
      existing: { bodyHash: 'a', messageId: 'msg_1', accepted: true },
    });
    expect(await store.read('ci', uniqueId('missing'))).toBeUndefined();
  });
});
