import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Resolver } from '#lib/net/index.js';

const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
/** The test-only certificate for `hooks.test` (test/fixtures/tls/README.md). */
export const HOOKS_TLS = {
  cert: readFileSync(new URL('hooks-test.cert.pem', TLS_DIR)),
  key: readFileSync(new URL('hooks-test.key.pem', TLS_DIR)),
};
export const HOOKS_HOST = 'hooks.test';

/**
 * Name resolution for webhook tests, so no DNS query leaves the machine: `hooks.test` is the local receiver
 * (loopback, which the local stack allows), `intranet.test` a private address, and `rebind.test` a public address
 * on its first lookup and a private one on every later lookup (DNS rebinding). Records every lookup.
 */
export function webhookResolver(): { resolve: Resolver; lookups: string[] } {
  const lookups: string[] = [];
  const resolve: Resolver = async (host) => {
    lookups.push(host);
    if (host === HOOKS_HOST) return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'intranet.test') return [{ address: '10.20.30.40', family: 4 }];
    if (host === 'rebind.test') {
      const first = lookups.filter((h) => h === host).length === 1;
      return [{ address: first ? '93.184.215.14' : '10.0.0.7', family: 4 }];
    }
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  return { resolve, lookups };
}

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: the webhook JSON, asserted field by field
  json: any;
}

/** A business's webhook endpoint: https on loopback with the hooks.test certificate; answers `status`. */
export interface WebhookReceiver {
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** What it answers from now on (default 200). */
  status: number;
  /** `https://hooks.test:<port><path>`. */
  url(path?: string): string;
  /** Takes the receiver off the network (connections refused) until {@link up}. */
  down(): Promise<void>;
  /** Listens again, on the same port. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let server: Server | undefined;
  let port = 0;
  const receiver: WebhookReceiver = {
    get port() {
      return port;
    },
    received,
    status: 200,
    url: (path = '/hook') => `https://${HOOKS_HOST}:${port}${path}`,
    down: async () => {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    },
    up: async () => {
      const s = createServer(HOOKS_TLS, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const headers = Object.fromEntries(
            Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
          );
          received.push({ path: req.url ?? '/', headers, body, json: JSON.parse(body) });
          res.writeHead(receiver.status, { 'content-type': 'text/plain' });
          res.end(receiver.status < 300 ? 'thanks' : `no (${receiver.status})`);
        });
      });
      await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
      port = (s.address() as AddressInfo).port;
      server = s;
    },
    stop: () => receiver.down(),
  };
  await receiver.up();
  return receiver;
}
