import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One DynamoDB call seen by the proxy: which function made it (from the SDK user agent) and which operation. */
export interface DynamoCall {
  /** `ingest`, `sender`, … from `app/wecom-gateway-<function>` in the user agent; `other` when absent. */
  readonly fn: string;
  /** `PutItem`, `UpdateItem`, … from the X-Amz-Target header. */
  readonly op: string;
}

export interface DynamoProxyHooks {
  /** Sees every request before it is forwarded; may return a replacement body. */
  request?(call: DynamoCall, body: Buffer): Buffer | undefined;
  /** Sees the emulator's answer before it is passed back. */
  response?(call: DynamoCall, status: number, body: Buffer, elapsedMs: number): void;
}

export interface DynamoProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of a DynamoDB emulator that lets the local stack and the benchmarks observe (and
 * the benchmarks amend) every call on the wire. Functions tag their SDK client with `userAgentAppId`
 * (`wecom-gateway/<function>`, sent as `app/wecom-gateway-<function>`), so calls are attributed per function without
 * the code under test reporting anything itself.
 */
export async function startDynamoProxy(target: string, hooks: DynamoProxyHooks): Promise<DynamoProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const started = performance.now();
      const agent = `${req.headers['x-amz-user-agent'] ?? ''} ${req.headers['user-agent'] ?? ''}`;
      const call: DynamoCall = {
        fn: /app\/wecom-gateway[-/](\w+)/.exec(agent)?.[1] ?? 'other',
        op:
          String(req.headers['x-amz-target'] ?? '')
            .split('.')
            .pop() || 'unknown',
      };
      const original = Buffer.concat(chunks);
      const body = hooks.request?.(call, original) ?? original;
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const proxied = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
        (up) => {
          const out: Buffer[] = [];
          up.on('data', (c: Buffer) => out.push(c));
          up.on('end', () => {
            const answer = Buffer.concat(out);
            hooks.response?.(call, up.statusCode ?? 0, answer, performance.now() - started);
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(answer);
          });
        },
      );
      proxied.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      proxied.end(body);
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
