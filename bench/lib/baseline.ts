import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * SPEC §7's ingest baseline: a bare `node:http` server that reads the body, does `work` (parse the JSON and one SQS
 * SendMessage, optionally more) and answers 202 `{"id","status":"queued"}` like the gateway, or 500 if work fails.
 * Used in-process by metrics/ingest-throughput.ts and in a process of its own by children/baseline-shim.ts.
 */
export function baselineServer(work: (body: string) => Promise<string>): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve()
        .then(() => work(Buffer.concat(chunks).toString('utf8')))
        .then(
          (id) => {
            const out = JSON.stringify({ id, status: 'queued' });
            res.writeHead(202, {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(out),
            });
            res.end(out);
          },
          () => {
            res.writeHead(500);
            res.end();
          },
        );
    });
  });
}
