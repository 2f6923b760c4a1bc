/**
 * A business's webhook endpoint for the bench: https on 127.0.0.1 (the gateway takes only https targets; loopback
 * because the local config allows it), with the bench-only certificate in bench/fixtures/tls. A function process
 * trusts it when started with {@link WEBHOOK_TRUST_ENV}. Answers 200 at once and counts what arrived.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const CERT_FILE = fileURLToPath(new URL('../fixtures/tls/loopback.cert.pem', import.meta.url));
const KEY_FILE = fileURLToPath(new URL('../fixtures/tls/loopback.key.pem', import.meta.url));

/** The environment that makes a Node process (the notify function's) trust the receiver's certificate. */
export const WEBHOOK_TRUST_ENV: Readonly<Record<string, string>> = { NODE_EXTRA_CA_CERTS: CERT_FILE };

export interface WebhookReceiver {
  /** `https://127.0.0.1:<port>/hook`: a `callback_url` (add a path per message if useful). */
  readonly url: string;
  received(): number;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let count = 0;
  const server: Server = createServer(
    { cert: readFileSync(CERT_FILE), key: readFileSync(KEY_FILE) },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        count++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => count,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
