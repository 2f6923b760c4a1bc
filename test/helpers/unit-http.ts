import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  readonly baseUrl: string;
  /** TCP connections the server accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 with a random port that counts the TCP connections it accepts. */
export async function startLocalServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<LocalServer> {
  const server: Server = createServer(handler);
  let connections = 0;
  server.on('connection', () => {
    connections++;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** A loopback port nothing listens on: bind one, then close it. */
export async function deadPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
