import { request as httpRequest } from 'node:http';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { GatewayConfig } from '#lib/config/index.js';
import { newDevKey } from '#local/dev-config.js';
import { testConfig } from '#local/harness/config.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '#local/stack.js';

/**
 * The local stack with two apps and three API keys, for the ingest API tests:
 * - `ops`: may send, read and recall for app `ops` only
 * - `billing`: may send, read and recall for app `billing` only
 * - `reader`: may only read `ops` messages (no messages:write scope)
 */
export interface IngestGateway {
  stack: LocalStack;
  keys: { ops: string; billing: string; reader: string };
  /** JSON request with the `ops` key unless `key` says otherwise (`null`: no Authorization header). */
  call(method: string, path: string, opts?: CallOptions): Promise<ApiResponse>;
  post(path: string, body: unknown, opts?: Omit<CallOptions, 'body'>): Promise<ApiResponse>;
  get(path: string, opts?: Omit<CallOptions, 'body'>): Promise<ApiResponse>;
}

export interface CallOptions {
  key?: string | null;
  /** Serialised with JSON.stringify unless it is a string or Buffer (sent as is). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: tests index into arbitrary response bodies
  body: any;
  text: string;
}

export async function startIngestGateway(
  opts: Omit<LocalStackOptions, 'config'> & { configure?: (c: GatewayConfig) => void } = {},
): Promise<IngestGateway> {
  const { configure, ...stackOpts } = opts;
  const ops = newDevKey();
  const billing = newDevKey();
  const reader = newDevKey();
  const config = testConfig(ops, { apps: ['ops', 'billing'] });
  const scopes = [
    'messages:write',
    'messages:read',
    'messages:recall',
  ] as GatewayConfig['apiKeys'][number]['scopes'];
  config.apiKeys = [
    { name: 'ops-key', sha256: ops.sha256, apps: ['ops'], scopes },
    { name: 'billing-key', sha256: billing.sha256, apps: ['billing'], scopes },
    { name: 'reader-key', sha256: reader.sha256, apps: ['ops'], scopes: ['messages:read'] },
  ];
  configure?.(config);
  const stack = await startLocalStack({
    port: 0,
    ...(process.env.DYNAMO_ENGINE === 'dynamodb-local' ? { dynamoEngine: 'dynamodb-local' as const } : {}),
    ...stackOpts,
    config,
    simulator: { latencyMs: 5, ...stackOpts.simulator },
  });
  const call = (method: string, path: string, o: CallOptions = {}) =>
    rawRequest(
      stack.apiUrl,
      method,
      path,
      {
        ...(o.key === null ? {} : { authorization: `Bearer ${o.key ?? ops.key}` }),
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...o.headers,
      },
      o.body === undefined || typeof o.body === 'string' || Buffer.isBuffer(o.body)
        ? o.body
        : JSON.stringify(o.body),
    );
  return {
    stack,
    keys: { ops: ops.key, billing: billing.key, reader: reader.key },
    call,
    post: (path, body, o = {}) => call('POST', path, { ...o, body }),
    get: (path, o = {}) => call('GET', path, o),
  };
}

/**
 * One HTTP request with the path and headers exactly as given (fetch would normalise the path and refuse some
 * header values the fuzz test wants to send).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<ApiResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)])),
            body: parsed,
            text,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Messages in a lane, counting in-flight and delayed ones (what "nothing was enqueued" must compare). */
import { queueDepth } from '#local/harness/sender.js';

export { queueDepth };

/** Depth of both lanes plus the table's item count: the state a rejected request must not change. */
export async function storedState(
  stack: LocalStack,
): Promise<{ high: number; normal: number; items: number }> {
  const [high, normal, items] = await Promise.all([
    queueDepth(stack, 'high'),
    queueDepth(stack, 'normal'),
    tableItemCount(stack),
  ]);
  return { high, normal, items };
}

/**
 * Items in the table, by a full (paginated) Scan: the emulators' ItemCount is not live. `sk` narrows it to one kind
 * of item under the prefix (a message's record is `sk` MSG; its first delivery, under the same pk, is SENT).
 */
export async function tableItemCount(stack: LocalStack, prefix?: string, sk?: string): Promise<number> {
  let count = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await stack.dynamo.send(
      new ScanCommand({
        TableName: stack.resources.tableName,
        ...(prefix
          ? {
              FilterExpression: `begins_with(pk, :p)${sk === undefined ? '' : ' AND sk = :sk'}`,
              ExpressionAttributeValues: {
                ':p': { S: prefix },
                ...(sk === undefined ? {} : { ':sk': { S: sk } }),
              },
            }
          : { Select: 'COUNT' }),
        ...(start ? { ExclusiveStartKey: start } : {}),
        ConsistentRead: true,
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}
