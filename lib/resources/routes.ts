/** The HTTP API's routes (SPEC §2), for CDK, the local API server and the functions' middleware alike. */
import type { FunctionId } from './functions.js';

/**
 * One HTTP API route: which function serves it, who may call it and whether it carries a JSON body. CDK creates
 * exactly these routes, the local API server serves exactly these, and the function's middleware and handler read
 * their auth and body rules from here. A new function adds its rows (a WeCom callback: `auth: 'none'`, since WeCom
 * signs its requests instead of presenting an API key).
 */
export interface RouteDefinition {
  /** Names the operation; the serving function dispatches on it. */
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway path syntax: `{name}` is a path parameter. */
  readonly path: string;
  readonly functionId: FunctionId;
  /**
   * `{ scope }`: the caller presents an API key (`Authorization: Bearer`) that holds this scope (config
   * `apiKeys[].scopes`). `{ urlToken }`: no API key; the named path parameter is a secret the operation checks
   * itself (a hook's token, a push sendkey — for senders that cannot set headers). `'none'`: no API key is asked for.
   */
  readonly auth: { readonly scope: string } | { readonly urlToken: string } | 'none';
  /**
   * `json`: the body is parsed before the handler runs (415/413/400 otherwise); `raw`: the handler gets the exact
   * bytes (413 over the limit), e.g. to check a signature before parsing (hooks; WeCom's XML, size-bounded by
   * lib/callback); `optionalJson`: like `json` when a body is sent, none at all is fine too (options a caller may
   * leave out); `none`: a body is ignored.
   */
  readonly body: 'json' | 'optionalJson' | 'raw' | 'none';
  /**
   * `inbound`: a route for other systems' deliveries (hooks, push). On AWS it gets a route-level throttle of its
   * own (context `hookRateLimit`/`hookBurstLimit`), so a vendor's storm cannot use up the API's budget.
   * `callback`: WeCom's callbacks. Their own route-level throttle (context `callbackRateLimit`/`callbackBurstLimit`)
   * instead of the stage's, which is sized for the businesses' requests: a corp's people pressing card buttons at
   * once must not meet 429s (WeCom tries a callback 3 times, then drops it), nor use up the businesses' budget.
   */
  readonly throttle?: 'inbound' | 'callback';
}

/** Inbound webhooks from SaaS systems; `{hook}` names an entry of config `hooks`. */
const HOOK_PATH = '/v1/hooks/{hook}/{token}';

/** The public v1 API (SPEC §2). */
export const ROUTES = [
  {
    id: 'submitMessage',
    method: 'POST',
    path: '/v1/messages',
    functionId: 'ingest',
    auth: { scope: 'messages:write' },
    body: 'json',
  },
  {
    id: 'submitBatch',
    method: 'POST',
    path: '/v1/messages/batch',
    functionId: 'ingest',
    auth: { scope: 'messages:write' },
    body: 'json',
  },
  {
    id: 'listMessages',
    method: 'GET',
    path: '/v1/messages',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'getMessage',
    method: 'GET',
    path: '/v1/messages/{id}',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  /** Takes back a message not yet sent (scheduled, queued, deferred): `messages:recall`, the scope that takes back. */
  {
    id: 'cancelMessage',
    method: 'DELETE',
    path: '/v1/messages/{id}',
    functionId: 'ingest',
    auth: { scope: 'messages:recall' },
    body: 'none',
  },
  {
    id: 'recallMessage',
    method: 'POST',
    path: '/v1/messages/{id}/recall',
    functionId: 'ingest',
    auth: { scope: 'messages:recall' },
    body: 'none',
  },
  {
    id: 'listWebhookDeliveries',
    method: 'GET',
    path: '/v1/messages/{id}/webhooks',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  // The lanes' dead-letter queues, for operators: reading one changes records (to `dead`), a redrive resends.
  {
    id: 'listDeadLetters',
    method: 'GET',
    path: '/v1/dlq',
    functionId: 'ingest',
    auth: { scope: 'admin' },
    body: 'none',
  },
  {
    id: 'getDeadLetter',
    method: 'GET',
    path: '/v1/dlq/{id}',
    functionId: 'ingest',
    auth: { scope: 'admin' },
    body: 'none',
  },
  {
    id: 'redriveDeadLetter',
    method: 'POST',
    path: '/v1/dlq/{id}/redrive',
    functionId: 'ingest',
    auth: { scope: 'admin' },
    body: 'optionalJson',
  },
  {
    id: 'listApps',
    method: 'GET',
    path: '/v1/apps',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'getApp',
    method: 'GET',
    path: '/v1/apps/{app}',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'listRobots',
    method: 'GET',
    path: '/v1/robots',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'getRobot',
    method: 'GET',
    path: '/v1/robots/{robot}',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  /** Which of the named recipients are outside the app's visible range: agent/get from the gateway's egress. */
  {
    id: 'checkReach',
    method: 'GET',
    path: '/v1/apps/{app}/reach',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'updateCard',
    method: 'POST',
    path: '/v1/messages/{id}/card',
    functionId: 'ingest',
    auth: { scope: 'messages:write' },
    body: 'json',
  },
  {
    id: 'listEvents',
    method: 'GET',
    path: '/v1/events',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  {
    id: 'listTemplates',
    method: 'GET',
    path: '/v1/templates',
    functionId: 'ingest',
    auth: { scope: 'messages:read' },
    body: 'none',
  },
  { id: 'health', method: 'GET', path: '/v1/health', functionId: 'ingest', auth: 'none', body: 'none' },
  /** The OpenAPI 3.1 document (docs/openapi.json), public so that client generators can fetch it. */
  {
    id: 'openapi',
    method: 'GET',
    path: '/v1/openapi.json',
    functionId: 'ingest',
    auth: 'none',
    body: 'none',
  },
  {
    id: 'receiveHook',
    method: 'POST',
    path: HOOK_PATH,
    functionId: 'ingest',
    auth: { urlToken: 'token' },
    body: 'raw',
    throttle: 'inbound',
  },
  {
    id: 'push',
    method: 'GET',
    path: '/v1/push/{sendkey}',
    functionId: 'ingest',
    auth: { urlToken: 'sendkey' },
    body: 'none',
    throttle: 'inbound',
  },
  {
    id: 'push',
    method: 'POST',
    path: '/v1/push/{sendkey}',
    functionId: 'ingest',
    auth: { urlToken: 'sendkey' },
    body: 'raw',
    throttle: 'inbound',
  },
  // WeCom signs its callbacks (msg_signature) instead of presenting an API key.
  {
    id: 'verifyCallbackUrl',
    method: 'GET',
    path: '/v1/wecom/callback/{app}',
    functionId: 'callback',
    auth: 'none',
    body: 'none',
    throttle: 'callback',
  },
  {
    id: 'receiveCallback',
    method: 'POST',
    path: '/v1/wecom/callback/{app}',
    functionId: 'callback',
    auth: 'none',
    body: 'raw',
    throttle: 'callback',
  },
] as const satisfies readonly RouteDefinition[];

/**
 * The browser apps the API serves on its own origin (the operator console): no API key is asked for, since the
 * pages hold no data; the app asks for a key and calls the v1 API with it. Not part of the v1 API, so not in
 * `ROUTES` (nor in docs/openapi.json); CDK and the local API server add them beside it.
 */
export const WEB_ROUTES = [
  { id: 'console', method: 'GET', path: '/console', functionId: 'ingest', auth: 'none', body: 'none' },
  {
    id: 'console',
    method: 'GET',
    path: '/console/{proxy+}',
    functionId: 'ingest',
    auth: 'none',
    body: 'none',
  },
] as const satisfies readonly RouteDefinition[];

/**
 * Every request no row of `ROUTES` matches (an unknown path, or a known path with another method) goes to this
 * function: API Gateway's `$default` route in AWS, the API server's fallback locally. So it is answered
 * `404 not_found` in the gateway's error shape everywhere, instead of API Gateway's own `{"message":"Not Found"}`,
 * at the cost of one invocation per such request. Without a key: the routes are no secret (docs/openapi.json),
 * and a 401 for a mistyped path would hide the mistake.
 */
export const DEFAULT_ROUTE = {
  id: 'unknownRoute',
  /** API Gateway's name for the catch-all route; also the event's `routeKey` there. */
  routeKey: '$default',
  functionId: 'ingest',
  auth: 'none',
  body: 'none',
} as const satisfies Omit<RouteDefinition, 'method' | 'path'> & { readonly routeKey: string };

export type Route = (typeof ROUTES)[number] | (typeof WEB_ROUTES)[number] | typeof DEFAULT_ROUTE;

/** API Gateway's route key (`POST /v1/messages`): what `event.routeKey` holds. */
export const routeKey = (route: RouteDefinition): string => `${route.method} ${route.path}`;

const ROUTES_BY_KEY: ReadonlyMap<string, Route> = new Map<string, Route>([
  ...[...ROUTES, ...WEB_ROUTES].map((r): [string, Route] => [routeKey(r), r]),
  [DEFAULT_ROUTE.routeKey, DEFAULT_ROUTE],
]);

type HookRoute = Extract<Route, { id: 'receiveHook' }>;
const HOOK_ROUTE = ROUTES.find((r): r is HookRoute => r.id === 'receiveHook') as HookRoute;
const HOOK_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A route of its own for one hook (`POST /v1/hooks/prom/{token}`), which API Gateway prefers over the generic one
 * (a literal segment is more specific): on AWS each such route has its own throttle, so one noisy vendor cannot use
 * up the budget of the others. Infra creates them for the hook names in context `hookRoutes`.
 */
export const dedicatedHookRoute = (hookName: string): Omit<HookRoute, 'path'> & { readonly path: string } => {
  if (!HOOK_NAME.test(hookName))
    throw new RangeError(`hook names are 1-64 of [A-Za-z0-9_-], got ${hookName}`);
  return { ...HOOK_ROUTE, path: HOOK_PATH.replace('{hook}', hookName) };
};

/** `POST /v1/hooks/prom/{token}` → `prom`; undefined for any other route key. */
export const dedicatedHookName = (key: string): string | undefined => {
  const match = /^POST \/v1\/hooks\/([A-Za-z0-9_-]{1,64})\/\{token\}$/.exec(key);
  return match?.[1];
};

/**
 * The route of an HTTP API event, by its `routeKey` (`$default`: {@link DEFAULT_ROUTE}); undefined for a key no
 * route has. A hook's dedicated route is the hook route (its name is in the path instead of the `hook` parameter:
 * see {@link hookNameOf}).
 */
export const routeOf = (key: string): Route | undefined =>
  ROUTES_BY_KEY.get(key) ?? (dedicatedHookName(key) === undefined ? undefined : HOOK_ROUTE);

/** The hook an event of the hook route names: its `hook` path parameter, or the literal of a dedicated route. */
export const hookNameOf = (event: {
  routeKey: string;
  pathParameters?: Readonly<Record<string, string | undefined>>;
}): string => event.pathParameters?.hook ?? dedicatedHookName(event.routeKey) ?? '';
