/**
 * Single-table key design (table from lib/resources: pk, sk strings; TTL attribute expiresAt).
 *
 * | item            | pk                                          | sk      |
 * |-----------------|---------------------------------------------|---------|
 * | message record  | MSG#<id>                                    | MSG     |
 * | first delivery  | MSG#<id>                                    | SENT    |
 * | idempotency key | IDEM#<api key name>#<sha256(Idempotency-Key)> | IDEM  |
 * | access token    | TOKEN#<corpId>#<agentId>                    | TOKEN   |
 * | token lock      | TOKEN#<corpId>#<agentId>                    | LOCK    |
 * | quota counter   | QUOTA#<app>#<scope>#<window index>          | Q       |
 * | member counter  | QUOTA#<app>#member#<userid>#<hour index>    | Q       |
 * | app pause       | PAUSE#<app>                                 | PAUSE   |
 *
 * Every item but message records carries `expiresAt`; messages get it from the retention setting.
 */
export const ATTR = {
  pk: 'pk',
  sk: 'sk',
  expiresAt: 'expiresAt',
} as const;

export const keys = {
  message: (id: string) => ({ pk: `MSG#${id}`, sk: 'MSG' }),
  /** The outcome of a message's first delivery, beside its record (read together: one Query on pk). */
  firstDelivery: (id: string) => ({ pk: `MSG#${id}`, sk: 'SENT' }),
  idempotency: (apiKey: string, keyHash: string) => ({ pk: `IDEM#${apiKey}#${keyHash}`, sk: 'IDEM' }),
  token: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'TOKEN' }),
  tokenLock: (corpId: string, agentId: number) => ({ pk: `TOKEN#${corpId}#${agentId}`, sk: 'LOCK' }),
  quota: (app: string, scope: string, window: number) => ({ pk: `QUOTA#${app}#${scope}#${window}`, sk: 'Q' }),
  memberQuota: (app: string, userId: string, hour: number) => ({
    pk: `QUOTA#${app}#member#${userId}#${hour}`,
    sk: 'Q',
  }),
  pause: (app: string) => ({ pk: `PAUSE#${app}`, sk: 'PAUSE' }),
} as const;

/** DynamoDB TTL deletes late (typically within days), so every read treats an expired item as absent. */
export const isExpired = (item: { expiresAt?: number } | undefined, nowMs: number): boolean =>
  item?.expiresAt !== undefined && item.expiresAt * 1000 <= nowMs;

export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
