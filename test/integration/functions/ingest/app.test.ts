import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { wrapIngestHandler } from '#functions/ingest/app.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import { buildHttpApiEvent, buildLambdaContext } from '#local/events/index.js';
import { silentEndpoint } from '#test/helpers/closed-port.js';
import { fakeIngest, OPS_KEY } from '#test/helpers/ingest-fakes.js';
import { LOCAL_CLIENT_CONFIG } from '#test/helpers/local-clients.js';

/** A read of one message, as API Gateway hands it to the function. */
const read = (id: string) =>
  buildHttpApiEvent({
    method: 'GET',
    rawPath: `/v1/messages/${id}`,
    rawQueryString: '',
    headers: { authorization: `Bearer ${OPS_KEY}`, 'content-type': 'application/json' },
    body: Buffer.from(''),
    sourceIp: '127.0.0.1',
    routeKey: 'GET /v1/messages/{id}',
    pathParameters: { id },
  });

describe('ingest handler with its middleware chain', () => {
  it('answers 503 with Retry-After before its Lambda timeout while DynamoDB takes connections and never answers', async () => {
    const silent = await silentEndpoint();
    const db = createDocumentClient('test', { ...LOCAL_CLIENT_CONFIG, endpoint: silent.endpoint });
    const f = fakeIngest();
    f.deps.messages = new DynamoMessageStore(db, 'wecom-gateway');
    // A short function timeout: the SDK's own timeouts and retries (4 attempts of up to 5 s) would outlast it.
    const short = buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 3 });
    try {
      const res = (await wrapIngestHandler(f.deps)(
        read('msg_01ARZ3NDEKTSV4RRFFQ69G5FAV'),
        short,
      )) as APIGatewayProxyStructuredResultV2;
      expect(short.getRemainingTimeInMillis()).toBeGreaterThan(0);
      expect(res.statusCode).toBe(503);
      expect(res.headers?.['retry-after']).toBe('1');
    } finally {
      db.destroy();
      await silent.close();
    }
  });
});
