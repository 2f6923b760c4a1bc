import middy from '@middy/core';
import type { APIGatewayProxyResultV2, Context } from 'aws-lambda';
import {
  flushMetrics,
  type HttpEvent,
  httpErrors,
  refreshConfig,
  withDeadline,
  withLogContext,
} from '#functions/shared/middleware.js';
import type { ConfigSource } from '#lib/config/index.js';
import { RouteNotFoundError } from '#lib/http/index.js';
import { type CallbackDeps, receiveCallback, verifyCallbackUrl } from '#lib/receipts/index.js';
import { type Route, routeOf } from '#lib/resources/index.js';

type CallbackRoute = Extract<Route, { functionId: 'callback' }>;

/** One lib/ call per route of lib/resources `ROUTES` served by the callback function. */
const OPERATIONS: {
  [R in CallbackRoute as R['id']]: (deps: CallbackDeps, event: HttpEvent) => Promise<APIGatewayProxyResultV2>;
} = {
  // WeCom wants the bare plaintext: no quotes, no BOM, no newline (path/90238).
  verifyCallbackUrl: async (deps, event) => ({
    statusCode: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body: verifyCallbackUrl(deps, appOf(event), event.queryStringParameters ?? {}),
  }),
  // An empty 200 tells WeCom the callback arrived; anything else makes it retry (three times).
  receiveCallback: async (deps, event) => {
    const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
    await receiveCallback(deps, appOf(event), event.queryStringParameters ?? {}, body);
    return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' };
  },
};

const appOf = (event: HttpEvent): string => event.pathParameters?.app ?? '';

/**
 * The bare handler: WeCom's URL verification (GET) and callbacks (POST) for `/v1/wecom/callback/{app}`. No API key:
 * WeCom signs every request (msg_signature), and lib/callback checks it before anything else is looked at.
 */
export const createCallbackHandler =
  (deps: CallbackDeps) =>
  async (event: HttpEvent): Promise<APIGatewayProxyResultV2> => {
    const route = routeOf(event.routeKey);
    if (route?.functionId !== 'callback') throw new RouteNotFoundError(event.routeKey);
    return OPERATIONS[route.id](deps, event);
  };

/**
 * The handler as Lambda runs it: log context, the deadline of its AWS calls (a store outage answers 503 before the
 * function times out, and WeCom retries), metrics, error mapping (401/400/404/413/503), config refresh.
 */
export const wrapCallbackHandler = (deps: CallbackDeps & { configSource?: ConfigSource }) =>
  withLogContext(
    withDeadline(
      middy<HttpEvent, APIGatewayProxyResultV2, Error, Context>(createCallbackHandler(deps))
        .use(flushMetrics(deps.metrics))
        .use(httpErrors(deps.logger))
        .use(refreshConfig(deps.configSource)),
    ),
    (event: HttpEvent) => ({ apiRequestId: event.requestContext.requestId, app: appOf(event) }),
  );
