// The fair baseline consumer for the sender (issue 25, SPEC §7): a handler module that the sender shim
// (children/sender-shim.ts) loads in place of the bundled sender, so that the bench's event source mapping emulation
// feeds it exactly as it feeds the sender (same pollers, same batches, same concurrency, same deletes).
//
// Per record it does what any consumer delivering these messages must do, and nothing else:
//   1. one conditional counter update: DynamoDB UpdateItem `ADD n :one` with `attribute_not_exists(n) OR n < :limit`
//      on an item per (app, member, minute), as a per-member rate-limit counter would (limit: the app's
//      perMemberPerMinute from the config file, WeCom's 30 by default); a refused update fails the record;
//   2. one `message/send` to WeCom over a kept-alive undici Pool (the project's undici), with a token fetched once
//      per process and app (`gettoken`); the body is the one the gateway sends by default (text, agentid, WeCom's
//      duplicate check on for DELIVERY_DEFAULTS.duplicateCheckSeconds), so WeCom's side does the same work;
//   3. one status write: DynamoDB PutItem of a small item beside nothing (`BENCH#SENT#<id>`).
// The records of a batch are handled concurrently (Promise.all); a failed one is reported in batchItemFailures.
//
// What it omits, on purpose (everything the gateway obeys beyond that one counter): the app's call and
// person-time quotas (paced minute, hour, day; blocks, held slots, deferrals), the per-member hourly limit,
// the message record and its status transitions (first delivery items, redelivery reads, copy claims),
// deadlines and TTLs, app pauses and probes, in-doubt handling (WeCom answers lost), retries with backoff and
// ChangeMessageVisibility, errcode handling beyond "not 0 → retry", token refresh on 40014/42001, broadcasts
// (toparty/totag sizing), split content, webhooks (notify jobs), logging, metrics and config refresh.
import { readFileSync } from 'node:fs';
import { DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Pool } from 'undici';

interface AppConfig {
  corpId: string;
  secret: string;
  agentId: number;
  quota?: { perMemberPerMinute?: number };
}
/** The fields of the gateway's queue body (lib/model `QueuedMessage`) this consumer reads. */
interface QueuedBody {
  id: string;
  app: string;
  request: { msgtype: string; content: unknown; recipients: { touser: string[] } };
}

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const tableName = env('TABLE_NAME');
const apps = (JSON.parse(readFileSync(env('GATEWAY_CONFIG'), 'utf8')) as { apps: Record<string, AppConfig> })
  .apps;
const base = new URL(env('WECOM_API_BASE'));
const prefix = base.pathname.replace(/\/+$/, '');
/** WeCom's default member limit (SPEC §5), when the config leaves it out. */
const MEMBER_PER_MINUTE = 30;
/** The gateway's default duplicate_check_interval (lib/config DELIVERY_DEFAULTS.duplicateCheckSeconds). */
const DUPLICATE_CHECK_SECONDS = 3_600;

const db = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });
// One socket per message this process may have in flight: the batch size times the invocations it takes at once.
const pool = new Pool(base.origin, {
  connections: Number(process.env.BENCH_BASELINE_CONNECTIONS ?? 10),
  pipelining: 1,
  keepAliveTimeout: 30_000,
  headersTimeout: 5_000,
  bodyTimeout: 5_000,
});

async function call<T>(method: 'GET' | 'POST', path: string, body?: string): Promise<T> {
  const res = await pool.request({
    method,
    path: `${prefix}${path}`,
    ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json; charset=utf-8' } }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`WeCom ${path.split('?')[0]} answered HTTP ${res.statusCode}`);
  return JSON.parse(text) as T;
}

/** One token per app and process, fetched on first use; concurrent first uses share the one call. */
const tokens = new Map<string, Promise<string>>();
function tokenFor(app: AppConfig): Promise<string> {
  let token = tokens.get(app.corpId);
  if (!token) {
    token = call<{ errcode: number; access_token?: string }>(
      'GET',
      `/cgi-bin/gettoken?corpid=${encodeURIComponent(app.corpId)}&corpsecret=${encodeURIComponent(app.secret)}`,
    ).then((r) => {
      if (r.errcode !== 0 || !r.access_token) throw new Error(`gettoken answered ${r.errcode}`);
      return r.access_token;
    });
    token.catch(() => tokens.delete(app.corpId));
    tokens.set(app.corpId, token);
  }
  return token;
}

async function deliver(record: SQSRecord): Promise<void> {
  const msg = JSON.parse(record.body) as QueuedBody;
  const app = apps[msg.app];
  if (!app) throw new Error(`unknown app ${msg.app}`);
  const touser = msg.request.recipients.touser;
  const minute = Math.floor(Date.now() / 60_000);
  await db.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: { pk: { S: `BENCH#RATE#${msg.app}#${touser.join('|')}` }, sk: { S: `m#${minute}` } },
      UpdateExpression: 'ADD n :one',
      ConditionExpression: 'attribute_not_exists(n) OR n < :limit',
      ExpressionAttributeValues: {
        ':one': { N: '1' },
        ':limit': { N: String(app.quota?.perMemberPerMinute ?? MEMBER_PER_MINUTE) },
      },
    }),
  );
  const token = await tokenFor(app);
  const sent = await call<{ errcode: number; msgid?: string }>(
    'POST',
    `/cgi-bin/message/send?access_token=${encodeURIComponent(token)}`,
    JSON.stringify({
      touser: touser.join('|'),
      msgtype: msg.request.msgtype,
      agentid: app.agentId,
      [msg.request.msgtype]: msg.request.content,
      enable_duplicate_check: 1,
      duplicate_check_interval: DUPLICATE_CHECK_SECONDS,
    }),
  );
  if (sent.errcode !== 0) throw new Error(`message/send answered ${sent.errcode}`);
  await db.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        pk: { S: `BENCH#SENT#${msg.id}` },
        sk: { S: 'SENT' },
        msgid: { S: sent.msgid ?? '' },
        at: { S: new Date().toISOString() },
      },
    }),
  );
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(event.Records.map(deliver));
  return {
    batchItemFailures: event.Records.filter((_, i) => results[i]?.status === 'rejected').map((r) => ({
      itemIdentifier: r.messageId,
    })),
  };
}
