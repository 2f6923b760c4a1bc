import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy in front of the DynamoDB emulator that counts requests per calling function and per
 * operation. Functions tag their SDK client with `userAgentAppId` (`app/wecom-gateway/<function>` in the user
 * agent), so the count is measured on the wire, not asserted by the code under test.
 */
export interface RequestCounter {
  readonly endpoint: string;
  /** function → operation (e.g. `UpdateItem`) → count. */
  counts(): Record<string, Record<string, number>>;
  total(fn?: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRequestCounter(target: string): Promise<RequestCounter> {
  const upstream = new URL(target);
  const counts = new Map<string, Map<string, number>>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const agent = `${req.headers['x-amz-user-agent'] ?? ''} ${req.headers['user-agent'] ?? ''}`;
    const fn = /app\/wecom-gateway[-/](\w+)/.exec(agent)?.[1] ?? 'other';
    const op =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() || 'unknown';
    const byOp = counts.get(fn) ?? new Map<string, number>();
    byOp.set(op, (byOp.get(op) ?? 0) + 1);
    counts.set(fn, byOp);
    const proxied = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    proxied.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(proxied);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => Object.fromEntries([...counts].map(([fn, ops]) => [fn, Object.fromEntries(ops)])),
    total: (fn) =>
      [...counts]
        .filter(([name]) => fn === undefined || name === fn)
        .reduce((sum, [, ops]) => sum + [...ops.values()].reduce((a, b) => a + b, 0), 0),
    reset: () => counts.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
