import middy from '@middy/core';
import type { APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { json, NotFoundError } from '#lib/http/index.js';
import {
  authenticate,
  getMessage,
  type IngestDeps,
  recallMessage,
  submitBatch,
  submitMessage,
} from '#lib/ingest/index.js';
import { flushMetrics, type HttpEvent, httpErrors, jsonBody } from '../shared/middleware.js';

/** API Gateway's own limit is 10 MB; the gateway's is 1 MB (a WeCom message is far smaller). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The bare handler: routes the HTTP API event to one lib/ call and maps the result. */
export const createIngestHandler =
  (deps: IngestDeps) =>
  async (event: HttpEvent): Promise<APIGatewayProxyResultV2> => {
    if (event.routeKey === 'GET /v1/health') return json(200, { status: 'ok' });
    const apiKey = authenticate(event.headers.authorization, deps.config.apiKeys);
    const id = event.pathParameters?.id ?? '';
    switch (event.routeKey) {
      case 'POST /v1/messages':
        return json(
          202,
          await submitMessage(deps, apiKey, event.parsedBody, event.headers['idempotency-key']),
        );
      case 'POST /v1/messages/batch':
        return json(207, { results: await submitBatch(deps, apiKey, event.parsedBody) });
      case 'GET /v1/messages/{id}':
        return json(200, await getMessage(deps, apiKey, id));
      case 'POST /v1/messages/{id}/recall':
        return json(200, await recallMessage(deps, apiKey, id));
      default:
        throw new NotFoundError(`no route ${event.routeKey}`);
    }
  };

/** The handler with its middleware chain, as Lambda runs it. */
export const wrapIngestHandler = (deps: IngestDeps) =>
  middy<HttpEvent, APIGatewayProxyResultV2, Error, Context>(createIngestHandler(deps))
    .use(flushMetrics(deps.metrics))
    .use(httpErrors(deps.logger))
    .use(jsonBody(MAX_BODY_BYTES));
