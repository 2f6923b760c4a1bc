// Child process for the peak-RSS figure of ingest: the bundled handler behind a minimal HTTP front door that turns
// requests into API Gateway v2 events with the local stack's event builders — the function's process and nothing
// of the emulators, simulator or load generator. Reports its port over IPC.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { buildHttpApiEvent, buildLambdaContext, toHttpResponse } from '#local/events/index.js';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;
const bundle = process.env.BENCH_HANDLER;
if (!bundle) throw new Error('BENCH_HANDLER not set');
const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: Handler };

function route(method: string, path: string): { routeKey: string; pathParameters?: Record<string, string> } {
  if (path === '/v1/messages' || path === '/v1/messages/batch' || path === '/v1/health')
    return { routeKey: `${method} ${path}` };
  const recall = /^\/v1\/messages\/([^/]+)\/recall$/.exec(path);
  if (recall)
    return { routeKey: 'POST /v1/messages/{id}/recall', pathParameters: { id: recall[1] as string } };
  const get = /^\/v1\/messages\/([^/]+)$/.exec(path);
  if (get) return { routeKey: 'GET /v1/messages/{id}', pathParameters: { id: get[1] as string } };
  return { routeKey: '$default' };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const method = req.method ?? 'GET';
    const [rawPath = '/', rawQueryString = ''] = (req.url ?? '/').split('?');
    const event = buildHttpApiEvent({
      method,
      rawPath,
      rawQueryString,
      headers: req.headersDistinct as Record<string, string[]>,
      body: Buffer.concat(chunks),
      sourceIp: '127.0.0.1',
      ...route(method, rawPath),
    });
    const context = buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 10 });
    handler(event, context)
      .then((result) => {
        const out = toHttpResponse(result);
        res.writeHead(out.statusCode, { ...out.headers, 'content-length': out.body.length });
        res.end(out.body);
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
