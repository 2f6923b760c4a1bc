import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed } from '#lib/aws/index.js';
import {
  type CounterReservation,
  type CounterStates,
  type PacedSlot,
  type Pool,
  type PoolState,
  type QuotaKey,
  type QuotaStore,
  TAT_TOLERANCE_MS,
} from '#lib/quota/index.js';
import { conditionalWrite, conditionFailureItem, type DocClient, portClient } from './client.js';
import { epochSeconds, keys } from './keys.js';

/**
 * Attribute layout of a quota item: `<counter><pool><field>`, e.g. `mnc` (member counter, normal pool, cumulative
 * count), `mnt` (its next free slot), `mnl` (its latest bucket), `mns<bucket>` (the count after that bucket), `mnq`
 * (the ceiling for blind reservations) and `mnk` (the limit the ceiling was computed with).
 */
const ATTRIBUTE = /^([a-z])([nh])(?:([ctlqk])|s(\d+))$/;
const FIELD = { c: 'cum', l: 'last', t: 'tat', q: 'ceil', k: 'ceilLimit' } as const;
const attr = (r: { counter: string; pool: Pool }, field: string) => `${r.counter}${r.pool}${field}`;

/** The counters in a stored item. */
export function parseCounters(item: Record<string, unknown> | undefined): CounterStates {
  const out: CounterStates = {};
  for (const [name, value] of Object.entries(item ?? {})) {
    const m = ATTRIBUTE.exec(name);
    if (!m || typeof value !== 'number') continue;
    const [, counter, pool, field, bucket] = m as unknown as [string, string, Pool, string?, string?];
    out[counter] ??= { n: { cum: 0, snaps: new Map() }, h: { cum: 0, snaps: new Map() } };
    const state = out[counter][pool] as PoolState & { snaps: Map<number, number> } & Record<string, unknown>;
    if (bucket !== undefined) state.snaps.set(Number(bucket), value);
    else state[FIELD[field as keyof typeof FIELD]] = value;
  }
  return out;
}

export class DynamoQuotaStore implements QuotaStore {
  private readonly db: DocClient;

  constructor(
    db: DocClient,
    private readonly tableName: string,
  ) {
    this.db = portClient(db);
  }

  async read(key: QuotaKey): Promise<CounterStates> {
    return parseCounters(await this.readItem(key));
  }

  private async readItem(key: QuotaKey): Promise<Record<string, unknown> | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: itemKey(key), ConsistentRead: true }),
    );
    return out.Item;
  }

  async reserve(
    key: QuotaKey,
    reservations: readonly CounterReservation[],
    expiresAtMs: number,
  ): Promise<{ ok: boolean; state: CounterStates }> {
    const names: Record<string, string> = { '#exp': 'expiresAt' };
    const values: Record<string, unknown> = { ':zero': 0, ':exp': epochSeconds(expiresAtMs) };
    const conditions: string[] = [];
    const sets = ['#exp = :exp'];
    const removes: string[] = [];
    reservations.forEach((r, i) => {
      Object.assign(names, {
        [`#c${i}`]: attr(r, 'c'),
        [`#l${i}`]: attr(r, 'l'),
        [`#s${i}`]: attr(r, `s${r.bucket}`),
        [`#q${i}`]: attr(r, 'q'),
        [`#k${i}`]: attr(r, 'k'),
      });
      Object.assign(values, { [`:a${i}`]: r.amount, [`:b${i}`]: r.bucket, [`:lim${i}`]: r.limit });
      // Blind (one unit, the item unknown): the stored ceiling, if computed with this limit, bounds the count.
      const fits = r.blind ? [`#c${i} < #q${i}`, `#k${i} = :lim${i}`] : [`#c${i} <= :max${i}`];
      if (!r.blind) values[`:max${i}`] = r.maxCum;
      // Every write sets the count, its bucket, ceiling and (for a paced counter) its next free slot together, so
      // where the count exists they do too and need no attribute_not_exists of their own.
      fits.push(`#l${i} <= :b${i}`);
      sets.push(
        `#c${i} = if_not_exists(#c${i}, :zero) + :a${i}`,
        `#s${i} = if_not_exists(#c${i}, :zero) + :a${i}`,
        `#l${i} = :b${i}`,
        `#k${i} = :lim${i}`,
      );
      if (r.blind) sets.push(`#q${i} = if_not_exists(#q${i}, :lim${i})`);
      else {
        values[`:q${i}`] = r.ceil ?? r.limit;
        sets.push(`#q${i} = :q${i}`);
      }
      if (r.pace) {
        names[`#t${i}`] = attr(r, 't');
        Object.assign(values, { [`:sl${i}`]: r.slotMs, [`:sp${i}`]: r.pace.spanMs });
        if (r.pace.mode === 'reset') {
          fits.push(`#t${i} <= :sl${i}`);
          sets.push(`#t${i} = :sl${i} + :sp${i}`);
        } else {
          // Busy: the slot is wherever the next free one stands, as long as it is still in the planned bucket.
          values[`:be${i}`] = r.pace.below ?? Number.MAX_SAFE_INTEGER;
          values[`:fr${i}`] = r.pace.from ?? r.slotMs;
          fits.push(`#t${i} >= :fr${i}`, `#t${i} < :be${i}`);
          sets.push(`#t${i} = if_not_exists(#t${i}, :sl${i}) + :sp${i}`);
        }
      }
      // `A OR B AND C` is `A OR (B AND C)` (AND binds tighter:
      // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html#Expressions.OperatorsAndFunctions.Precedence).
      // Written without the inner parentheses because dynalite's parser backtracks on nested ones: 20 ms of CPU per
      // request with them, under 2 without, on the event loop the whole local stack shares.
      conditions.push(`(attribute_not_exists(#c${i}) OR ${fits.join(' AND ')})`);
      r.dropBuckets.forEach((b, j) => {
        names[`#d${i}_${j}`] = attr(r, `s${b}`);
        removes.push(`#d${i}_${j}`);
      });
    });
    let refused: Record<string, unknown> | undefined;
    const out = await this.db
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          // The item comes back with the write at no extra request: the caller's next plan starts from it; and with
          // a refusal too (full, or someone reserved meanwhile), as it stood then.
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      .catch((err: unknown) => {
        if (!isConditionFailed(err)) throw err;
        refused = conditionFailureItem(err);
        return undefined;
      });
    if (out) return { ok: true, state: parseCounters(out.Attributes) };
    // dynalite returns no item with a refusal: read it (a GetItem that DynamoDB saves).
    return { ok: false, state: parseCounters(refused ?? (await this.readItem(key))) };
  }

  async giveBack(key: QuotaKey, slot: PacedSlot): Promise<CounterStates | undefined> {
    // The long window's count stays: a hour or day charged for a send that did not happen is only conservative.
    const out = await conditionalWrite(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey(key),
          UpdateExpression: 'SET #t = :to',
          // Not `=`: DynamoDB stored the exact sum of slot and pace (fractions of a millisecond), while the SDK sends
          // a number as its shortest round-trip decimal, which may differ in the 17th digit. Slots are a pace apart.
          ConditionExpression: '#t BETWEEN :lo AND :hi',
          ExpressionAttributeNames: { '#t': attr(slot, 't') },
          ExpressionAttributeValues: {
            ':to': slot.toTat,
            ':lo': slot.fromTat - TAT_TOLERANCE_MS,
            ':hi': slot.fromTat + TAT_TOLERANCE_MS,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out ? parseCounters(out.Attributes) : undefined;
  }
}

function itemKey(key: QuotaKey) {
  return keys.quota(key.app, key.kind === 'member' ? `member#${key.member}` : key.kind);
}
