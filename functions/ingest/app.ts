import middy from '@middy/core';
import type { APIGatewayProxyResultV2, Context } from 'aws-lambda';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { json, NotFoundError } from '#lib/http/index.js';
import {
  createAuthenticator,
  getMessage,
  type IngestDeps,
  recallMessage,
  submitBatch,
  submitMessage,
} from '#lib/ingest/index.js';
import { bearerAuth, flushMetrics, type HttpEvent, httpErrors, jsonBody } from '../shared/middleware.js';

/** API Gateway's own limit is 10 MB; the gateway's is 1 MB (a WeCom message is far smaller). */
export const MAX_BODY_BYTES = 1024 * 1024;

export const HEALTH_ROUTE = 'GET /v1/health';

/** The event after the middleware chain: `principal` is the authenticated API key. */
export type IngestEvent = HttpEvent & { principal?: ApiKeyConfig };

/**
 * The bare handler: routes the HTTP API event to one lib/ call and maps the result. It authenticates by itself
 * when no middleware did (tests call it bare), so it is never open.
 */
export const createIngestHandler = (deps: IngestDeps) => {
  const authenticate = createAuthenticator(deps.config.apiKeys);
  return async (event: IngestEvent): Promise<APIGatewayProxyResultV2> => {
    if (event.routeKey === HEALTH_ROUTE) return json(200, { status: 'ok' });
    const apiKey = event.principal ?? authenticate(event.headers.authorization);
    const id = event.pathParameters?.id ?? '';
    const idempotencyKey = event.headers['idempotency-key'];
    switch (event.routeKey) {
      case 'POST /v1/messages':
        return json(202, await submitMessage(deps, apiKey, event.parsedBody, idempotencyKey));
      case 'POST /v1/messages/batch':
        return json(207, { results: await submitBatch(deps, apiKey, event.parsedBody, idempotencyKey) });
      case 'GET /v1/messages/{id}':
        return json(200, await getMessage(deps, apiKey, id));
      case 'POST /v1/messages/{id}/recall':
        return json(200, await recallMessage(deps, apiKey, id));
      default:
        throw new NotFoundError(`no route ${event.routeKey}`);
    }
  };
};

/** The handler with its middleware chain, as Lambda runs it: metrics, error mapping, auth, then the body. */
export const wrapIngestHandler = (deps: IngestDeps) =>
  middy<IngestEvent, APIGatewayProxyResultV2, Error, Context>(createIngestHandler(deps))
    .use(flushMetrics(deps.metrics))
    .use(httpErrors(deps.logger))
    .use(bearerAuth(createAuthenticator(deps.config.apiKeys), (event) => event.routeKey === HEALTH_ROUTE))
    .use(jsonBody(MAX_BODY_BYTES));
