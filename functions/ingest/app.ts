import middy from '@middy/core';
import type { APIGatewayProxyResultV2, Context } from 'aws-lambda';
import {
  bearerAuth,
  bodyBytes,
  flushMetrics,
  type HttpEvent,
  httpErrors,
  jsonBody,
  rawBody,
  refreshConfig,
  withDeadline,
  withLogContext,
} from '#functions/shared/middleware.js';
import type { ApiKeyConfig, ConfigSource, GatewayConfig } from '#lib/config/index.js';
import { type HttpResponse, json, RouteNotFoundError, toErrorBody } from '#lib/http/index.js';
import { requireScope } from '#lib/ingest/access.js';
import { type Authenticator, createAuthenticator } from '#lib/ingest/auth.js';
import { submitBatch, submitMessage } from '#lib/ingest/service.js';
import type { IngestDeps } from '#lib/ingest/types.js';
import { hookNameOf, type Route, routeOf } from '#lib/resources/index.js';
import type { WebApp } from '#lib/web/assets.js';

// Sending is what a cold start serves; every other route (a message's status and the list, SaaS hooks, one-URL push,
// the DLQ, the console's files and its pages' reads, the OpenAPI document, recall, cancel, card updates, reach
// checks) loads its code on first use: the function's bundle keeps it in chunks of its own
// (infra/constructs/esbuild-options.ts), so a cold start compiles none of it.
const apps = () => import('#lib/ingest/apps.js');
const cancel = () => import('#lib/ingest/cancel.js');
const card = () => import('#lib/ingest/card.js');
const dlq = () => import('#lib/ops/dlq-api.js');
const events = () => import('#lib/ingest/events.js');
const hooks = () => import('#lib/ingest/hooks.js');
const list = () => import('#lib/ingest/list.js');
const reach = () => import('#lib/ingest/reach.js');
const recall = () => import('#lib/ingest/recall.js');
const robots = () => import('#lib/ingest/robots.js');
const status = () => import('#lib/ingest/status.js');
const templates = () => import('#lib/ingest/templates.js');
const web = () => import('#lib/web/serve.js');
const webhooks = () => import('#lib/ingest/webhooks.js');

/** API Gateway's own limit is 10 MB; the gateway's is 1 MB (a WeCom message is far smaller). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The event after the middleware chain: `principal` is the authenticated API key. */
export type IngestEvent = HttpEvent & { principal?: ApiKeyConfig };

type IngestRoute = Extract<Route, { functionId: 'ingest' }>;
type Operation<R extends IngestRoute> = (
  deps: IngestDeps,
  event: IngestEvent,
  apiKey: R['auth'] extends { scope: string } ? ApiKeyConfig : undefined,
  web: WebApps,
) => Promise<HttpResponse>;

/** What the function serves besides the API, each loaded on its first request: absent ones answer 404. */
export interface WebApps {
  /** The operator console (lib/resources `WEB_ROUTES`). */
  console?: () => Promise<WebApp | undefined>;
  /**
   * The OpenAPI document as JSON text (docs/openapi.json, generated from the validator's schemas by `npm run openapi`;
   * a test keeps it current).
   */
  openapi?: () => Promise<string | undefined>;
}

/** The exact bytes of a `raw` route's body: from the rawBody middleware, or decoded here for a bare handler. */
const bytesOf = (event: IngestEvent): Buffer => event.rawBody ?? bodyBytes(event);

/** One lib/ call per route of lib/resources `ROUTES` served by ingest (the type demands one for each). */
const OPERATIONS: { [R in IngestRoute as R['id']]: Operation<R> } = {
  submitMessage: async (deps, event, apiKey) =>
    json(202, await submitMessage(deps, apiKey, event.parsedBody, event.headers['idempotency-key'])),
  submitBatch: async (deps, event, apiKey) => {
    const results = await submitBatch(deps, apiKey, event.parsedBody, event.headers['idempotency-key']);
    return json(207, {
      results: results.map((r) => ('error' in r ? { index: r.index, error: toErrorBody(r.error) } : r)),
    });
  },
  listMessages: async (deps, event, apiKey) =>
    json(200, await (await list()).listMessages(deps, apiKey, event.queryStringParameters ?? {})),
  getMessage: async (deps, event, apiKey) =>
    json(200, await (await status()).getMessage(deps, apiKey, event.pathParameters?.id ?? '')),
  cancelMessage: async (deps, event, apiKey) =>
    json(200, await (await cancel()).cancelMessage(deps, apiKey, event.pathParameters?.id ?? '')),
  recallMessage: async (deps, event, apiKey) =>
    json(200, await (await recall()).recallMessage(deps, apiKey, event.pathParameters?.id ?? '')),
  listWebhookDeliveries: async (deps, event, apiKey) =>
    json(200, await (await webhooks()).listWebhookDeliveries(deps, apiKey, event.pathParameters?.id ?? '')),
  listDeadLetters: async (deps, event, apiKey) =>
    json(200, await (await dlq()).listDlq(deps, apiKey, event.queryStringParameters ?? {})),
  getDeadLetter: async (deps, event, apiKey) =>
    json(200, await (await dlq()).getDeadLetter(deps, apiKey, event.pathParameters?.id ?? '')),
  redriveDeadLetter: async (deps, event, apiKey) =>
    json(
      200,
      await (await dlq()).redriveDeadLetter(deps, apiKey, event.pathParameters?.id ?? '', event.parsedBody),
    ),
  listApps: async (deps, _event, apiKey) => json(200, await (await apps()).listApps(deps, apiKey)),
  getApp: async (deps, event, apiKey) =>
    json(200, await (await apps()).getAppState(deps, apiKey, event.pathParameters?.app ?? '')),
  listRobots: async (deps, _event, apiKey) => json(200, await (await robots()).listRobots(deps, apiKey)),
  getRobot: async (deps, event, apiKey) =>
    json(200, await (await robots()).getRobotState(deps, apiKey, event.pathParameters?.robot ?? '')),
  checkReach: async (deps, event, apiKey) =>
    json(
      200,
      await (await reach()).checkReach(
        deps,
        apiKey,
        event.pathParameters?.app ?? '',
        event.queryStringParameters ?? {},
      ),
    ),
  updateCard: async (deps, event, apiKey) =>
    json(
      200,
      await (await card()).updateCard(deps, apiKey, event.pathParameters?.id ?? '', event.parsedBody),
    ),
  listEvents: async (deps, event, apiKey) =>
    json(200, await (await events()).listEvents(deps, apiKey, event.queryStringParameters ?? {})),
  listTemplates: async (deps, event, apiKey) =>
    json(200, (await templates()).listTemplates(deps, apiKey, event.queryStringParameters ?? {})),
  health: async () => json(200, { status: 'ok' }),
  console: async (_deps, event, _apiKey, apps) => {
    const app = await apps.console?.();
    const answer =
      app &&
      (await web()).serveWebApp(app, event.rawPath, { acceptEncoding: event.headers['accept-encoding'] });
    if (!answer) throw new RouteNotFoundError(`${event.requestContext.http.method} ${event.rawPath}`);
    // Binary-safe for every asset type; API Gateway decodes it (payload format 2.0).
    return { ...answer, body: answer.body.toString('base64'), isBase64Encoded: true };
  },
  unknownRoute: async (_deps, event) => {
    throw new RouteNotFoundError(`${event.requestContext.http.method} ${event.rawPath}`);
  },
  openapi: async (_deps, event, _apiKey, apps) => {
    const body = await apps.openapi?.();
    if (body === undefined)
      throw new RouteNotFoundError(`${event.requestContext.http.method} ${event.rawPath}`);
    return { ...json(200, null, { 'cache-control': 'public, max-age=300' }), body };
  },
  // 202 when queued, 200 when ignored (nothing to send, e.g. GitHub's ping): both 2xx, so vendors do not retry.
  receiveHook: async (deps, event) => {
    const receipt = await (await hooks()).receiveHook(
      deps,
      hookNameOf(event),
      event.pathParameters?.token ?? '',
      {
        rawBody: bytesOf(event),
        // Header names are case-insensitive (RFC 9110 §5.1); the sources look them up in lower case.
        headers: Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k.toLowerCase(), v])),
      },
    );
    return json(receipt.status === 'queued' ? 202 : 200, receipt);
  },
  // 200 as ServerChan answers, so its clients' checks pass; the body carries both shapes.
  push: async (deps, event) =>
    json(
      200,
      await (await hooks()).receivePush(deps, event.pathParameters?.sendkey ?? '', {
        query: event.rawQueryString ?? '',
        ...(event.requestContext.http.method === 'POST' ? { rawBody: bytesOf(event) } : {}),
        ...(event.headers['content-type'] === undefined
          ? {}
          : { contentType: event.headers['content-type'] }),
      }),
    ),
};

/** Routes that ask for an API key; the others are public or carry their own token in the URL (checked by lib/). */
const needsApiKey = (route: Route): route is Extract<Route, { auth: { scope: string } }> =>
  typeof route.auth === 'object' && 'scope' in route.auth;

const isPublic = (event: HttpEvent): boolean => {
  const route = routeOf(event.routeKey);
  return route !== undefined && !needsApiKey(route);
};

/** One authenticator per config object: built when a (re-read) config comes into force, not per request. */
const authenticators = new WeakMap<GatewayConfig, Authenticator>();
const authenticatorFor = (config: GatewayConfig): Authenticator => {
  let authenticator = authenticators.get(config);
  if (!authenticator) {
    authenticator = createAuthenticator(config.apiKeys);
    authenticators.set(config, authenticator);
  }
  return authenticator;
};

/**
 * The bare handler: routes the HTTP API event to one lib/ call and maps the result. It authenticates by itself
 * when no middleware did (tests call it bare), so it is never open. The route's scope is checked here, after the
 * body was parsed and before any domain code runs.
 */
export const createIngestHandler = (
  deps: IngestDeps,
  authenticate = (header: string | undefined) => authenticatorFor(deps.config)(header),
  web: WebApps = {},
) => {
  return async (event: IngestEvent): Promise<APIGatewayProxyResultV2> => {
    const route = routeOf(event.routeKey);
    if (route?.functionId === 'ingest' && !needsApiKey(route)) {
      return (OPERATIONS[route.id] as Operation<typeof route>)(deps, event, undefined, web);
    }
    const apiKey = event.principal ?? authenticate(event.headers.authorization);
    // Another function's route (the WeCom callback) never reaches this handler in AWS: API Gateway routes it.
    if (route?.functionId !== 'ingest' || !needsApiKey(route)) {
      throw new RouteNotFoundError(event.routeKey);
    }
    requireScope(apiKey, route.auth.scope);
    return (OPERATIONS[route.id] as Operation<typeof route>)(deps, event, apiKey, web);
  };
};

/** What the log lines of one request carry besides the Lambda request id: API Gateway's id, and the message's. */
const requestKeys = (event: IngestEvent) => ({
  apiRequestId: event.requestContext.requestId,
  ...(event.pathParameters?.id !== undefined && { messageId: event.pathParameters.id }),
});

/**
 * The handler with its middleware chain, as Lambda runs it: log context, the deadline of its AWS and WeCom calls,
 * metrics, error mapping, config refresh, auth, then the body. The authenticator follows the config in force
 * (`deps.config` is re-read with a bounded age).
 */
export const wrapIngestHandler = (deps: IngestDeps & { configSource?: ConfigSource }, web: WebApps = {}) =>
  withLogContext(withDeadline(wrapIngestChain(deps, web)), requestKeys);

const wrapIngestChain = (deps: IngestDeps & { configSource?: ConfigSource }, web: WebApps) => {
  const authenticate = (header: string | undefined) => authenticatorFor(deps.config)(header);
  return middy<IngestEvent, APIGatewayProxyResultV2, Error, Context>(
    createIngestHandler(deps, authenticate, web),
  )
    .use(flushMetrics(deps.metrics))
    .use(httpErrors(deps.logger))
    .use(refreshConfig(deps.configSource))
    .use(bearerAuth(authenticate, isPublic))
    .use(jsonBody(MAX_BODY_BYTES))
    .use(rawBody(MAX_BODY_BYTES));
};
