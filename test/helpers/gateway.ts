import type { GatewayConfig } from '#lib/config/index.js';
import { newDevKey } from '#local/dev-config.js';
import { testConfig } from '#local/harness/config.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '#local/stack.js';

/** A parsed JSON response body; tests assert on it field by field. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON from the API under test, narrowed by the assertions
export type JsonBody = any;

export interface TestGateway {
  stack: LocalStack;
  key: string;
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: JsonBody }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: JsonBody }>;
  /** Polls GET /v1/messages/{id} until `pred` holds. */
  waitForStatus(id: string, statuses: string[], timeoutMs?: number): Promise<JsonBody>;
}

/** Starts the full local stack on random ports with a fresh key; every test file gets its own. */
export async function startTestGateway(
  opts: Omit<LocalStackOptions, 'config'> & {
    quota?: Partial<GatewayConfig['apps'][string]['quota']>;
    apps?: string[];
    /** Per app: delivery settings (budget, configuration-error hold, duplicate-check interval). */
    delivery?: Record<string, NonNullable<GatewayConfig['apps'][string]['delivery']>>;
    /** Per app: sizes of broadcasts it may not resolve through WeCom's contacts. */
    broadcast?: Record<string, NonNullable<GatewayConfig['apps'][string]['broadcast']>>;
    /** More keys next to the test's own (e.g. one made by `wecom-gateway keys create`). */
    extraApiKeys?: GatewayConfig['apiKeys'];
    /** Every app's webhook block, changed (a default url, an events filter). */
    webhook?: Partial<NonNullable<GatewayConfig['apps'][string]['webhook']>>;
    /** Last changes to the config before the stack starts. */
    configure?: (config: GatewayConfig) => void;
  } = {},
): Promise<TestGateway> {
  const devKey = newDevKey();
  const { quota, apps, delivery, broadcast, extraApiKeys = [], webhook, configure, ...stackOpts } = opts;
  const config = testConfig(devKey, {
    ...(quota ? { quota } : {}),
    ...(apps ? { apps } : {}),
    ...(delivery ? { delivery } : {}),
    ...(webhook ? { webhook } : {}),
    ...(broadcast ? { broadcast } : {}),
  });
  config.apiKeys.push(...extraApiKeys);
  configure?.(config);
  const stack = await startLocalStack({
    port: 0,
    // The DynamoDB Local pass of `npm test` runs some files on AWS's DynamoDB Local (scripts/test-dynamodb-local.ts).
    ...(process.env.DYNAMO_ENGINE === 'dynamodb-local' ? { dynamoEngine: 'dynamodb-local' as const } : {}),
    ...stackOpts,
    config,
    simulator: { latencyMs: 5, ...stackOpts.simulator },
  });
  const auth = { authorization: `Bearer ${devKey.key}` };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const gw: TestGateway = {
    stack,
    key: devKey.key,
    post: (path, body, headers) => call('POST', path, body, headers),
    get: (path, headers) => call('GET', path, undefined, headers),
    waitForStatus: async (id, statuses, timeoutMs = 20_000) => {
      let last: JsonBody;
      await waitFor(
        async () => {
          last = (await gw.get(`/v1/messages/${id}`)).body;
          return statuses.includes(last?.status);
        },
        timeoutMs,
        () => `message ${id} never reached ${statuses.join('|')}; last: ${JSON.stringify(last)}`,
      );
      return last;
    },
  };
  return gw;
}

/** Polls until `check` is true; fails with `describe()` after `timeoutMs`. A bounded wait, not a timing assertion. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  describe: () => string = () => 'condition not met',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const text = (
  content: string,
  touser: string | string[] = 'zhangsan',
  extra: Record<string, unknown> = {},
) => ({
  app: 'ops',
  touser,
  msgtype: 'text',
  text: { content },
  ...extra,
});

/**
 * Stack options that run WeCom's minute (and hour) as `minuteMs` in both the gateway and the simulator, so that a
 * member's messages, paced 60 s ÷ 19 apart on the normal lane, come 210 ms apart with the default 4 s: for tests
 * about what happens to messages, not about how long WeCom's windows are.
 */
export const scaledMinutes = (minuteMs = 4_000) => {
  const windows = { minuteMs, hourMs: minuteMs * 60, dayMs: 86_400_000 };
  return {
    simulator: { latencyMs: 5, windows },
    runtime: {
      windows: { ...windows, dayOffsetMs: 0 },
      slotWaitMs: 1_500,
      deferJitterSeconds: 0,
      retry: { baseSeconds: 1, capSeconds: 1 },
    },
  };
};
