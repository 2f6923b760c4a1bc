import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { buildConnector } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { Resolver } from '#lib/net/index.js';
import {
  classifyDelivery,
  createWebhookClient,
  type DeliveryResult,
  generateWebhookSecret,
  signWebhook,
  type WebhookClient,
  type WebhookClientOptions,
} from '#lib/webhooks/index.js';
import { deadPort, type LocalServer, startLocalServer } from '#test/helpers/unit-http.js';

const TLS_DIR = new URL('../../fixtures/tls/', import.meta.url);
const TLS = {
  cert: readFileSync(new URL('hooks-test.cert.pem', TLS_DIR)),
  key: readFileSync(new URL('hooks-test.key.pem', TLS_DIR)),
};
const PUBLIC_V4 = '93.184.215.14';

/** A resolver double: each lookup of a host takes its next answer (the last one repeats); records every call. */
function scriptedResolver(script: Record<string, string[][]>) {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    const answers = script[host];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const answer = answers[Math.min(calls.filter((h) => h === host).length - 1, answers.length - 1)] ?? [];
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

/**
 * Stands in for "the internet": whatever address the guard hands it, it records and then dials the local test
 * server. The recorded options are what a real socket would have connected to.
 */
function recordingDialer(port: number) {
  const dialled: { hostname: string; servername?: string | undefined }[] = [];
  const connector: buildConnector.connector = (options, callback) => {
    dialled.push({ hostname: options.hostname, servername: options.servername });
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => callback(null, socket));
    socket.once('error', (err) => callback(err, null));
  };
  return { connector, dialled };
}

const portOf = (server: LocalServer) => Number(new URL(server.baseUrl).port);
const post = (client: WebhookClient, url: string, extra: { allowedPorts?: number[] } = {}) =>
  client.deliver({ url, headers: { 'content-type': 'application/json' }, body: '{}', ...extra });

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});
async function server(handler: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const s = await startLocalServer(handler);
  cleanups.push(() => s.close());
  return s;
}
function client(opts: WebhookClientOptions): WebhookClient {
  const c = createWebhookClient(opts);
  cleanups.push(() => c.close());
  return c;
}
const ok = () => server((_req, res) => res.writeHead(204, { connection: 'close' }).end());

describe('createWebhookClient › SSRF guard at connect time', () => {
  it('connects to the address it checked, not to what DNS says a moment later (rebinding)', async () => {
    const target = await ok();
    const dns = scriptedResolver({ 'hooks.example.com': [[PUBLIC_V4], ['10.0.0.7']] });
    const dialer = recordingDialer(portOf(target));
    const c = client({ resolve: dns.resolve, connector: dialer.connector });

    const first = await post(c, 'https://hooks.example.com/wecom');
    expect(first).toMatchObject({ kind: 'response', status: 204 });
    // One lookup; the socket went to that lookup's (public) answer, with the name kept for TLS.
    expect(dns.calls).toEqual(['hooks.example.com']);
    expect(dialer.dialled).toEqual([{ hostname: PUBLIC_V4, servername: 'hooks.example.com' }]);

    // The receiver closed the connection, so the next delivery connects anew: the second answer is private.
    const second = await post(c, 'https://hooks.example.com/wecom');
    expect(second).toMatchObject({
      kind: 'refused',
      address: '10.0.0.7',
      reason: 'host hooks.example.com resolves to a private address (10.0.0.7)',
    });
    expect(dns.calls).toHaveLength(2);
    expect(dialer.dialled).toHaveLength(1); // nothing was dialled for the refused one
    expect(classifyDelivery(second).outcome).toBe('stop');
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'], // cloud metadata
    ['fd00:ec2::254', 'private'], // EC2 metadata over IPv6 (ULA)
    ['fe80::1', 'link-local'],
    ['fc00::1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'IPv4-mapped'],
    ['::ffff:0:a00:1', 'embeds an IPv4'], // SIIT
    ['64:ff9b::a00:1', 'embeds an IPv4'], // NAT64
    ['64:ff9b:1::a00:1', 'embeds an IPv4'], // local-use NAT64
    ['2002:a00:1::', 'embeds an IPv4'], // 6to4
  ])('refuses a host resolving to %s (%s) and dials nothing', async (address, what) => {
    const dns = scriptedResolver({ 'hooks.example.com': [[address]] });
    const dialer = recordingDialer(1);
    const result = await post(
      client({ resolve: dns.resolve, connector: dialer.connector }),
      'https://hooks.example.com/',
    );
    expect(result).toMatchObject({ kind: 'refused', address });
    expect((result as { reason: string }).reason).toContain(what);
    expect(dialer.dialled).toEqual([]);
  });

  it('refuses a host when any one of its addresses is private', async () => {
    const dns = scriptedResolver({ 'mixed.example.com': [[PUBLIC_V4, '192.168.0.9']] });
    const dialer = recordingDialer(1);
    const result = await post(
      client({ resolve: dns.resolve, connector: dialer.connector }),
      'https://mixed.example.com/',
    );
    expect(result).toMatchObject({ kind: 'refused', address: '192.168.0.9' });
    expect(dialer.dialled).toEqual([]);
  });

  it('checks IP literals without DNS', async () => {
    const dns = scriptedResolver({});
    const dialer = recordingDialer(1);
    const c = client({ resolve: dns.resolve, connector: dialer.connector });
    expect(await post(c, 'https://169.254.169.254/latest/meta-data')).toMatchObject({ kind: 'refused' });
    expect(await post(c, 'https://[::ffff:7f00:1]/')).toMatchObject({ kind: 'refused' });
    expect(dns.calls).toEqual([]);
    expect(dialer.dialled).toEqual([]);
  });

  it.each([
    ['http://hooks.example.com/', 'must use https'],
    ['ftp://hooks.example.com/', 'must use https'],
    ['https://user:pass@hooks.example.com/', 'userinfo'],
    ['https://hooks.example.com:8443/', 'port 8443'],
    ['https://hooks.example.com:22/', 'port 22'],
    ['not a url', 'absolute URL'],
  ])('refuses %s before any lookup', async (url, why) => {
    const dns = scriptedResolver({ 'hooks.example.com': [[PUBLIC_V4]] });
    const result = await post(client({ resolve: dns.resolve }), url);
    expect(result.kind).toBe('refused');
    expect((result as { reason: string }).reason).toContain(why);
    expect(dns.calls).toEqual([]);
  });

  it('allows another port when the app allows it', async () => {
    const target = await ok();
    const dns = scriptedResolver({ 'hooks.example.com': [[PUBLIC_V4]] });
    const dialer = recordingDialer(portOf(target));
    const c = client({ resolve: dns.resolve, connector: dialer.connector });
    expect(await post(c, 'https://hooks.example.com:8443/', { allowedPorts: [8443] })).toMatchObject({
      status: 204,
    });
  });

  it('reports a resolver that cannot answer now as a failure to retry, not a refusal', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    const result = await post(client({ resolve }), 'https://flaky.example.com/');
    expect(result).toMatchObject({ kind: 'failed', code: 'lookup_unavailable' });
    expect(classifyDelivery(result).outcome).toBe('retry');
  });
});

describe('createWebhookClient › loopback and the local stack', () => {
  it('refuses loopback unless allowLoopback is set', async () => {
    const target = await ok();
    const plain = client({});
    expect(await post(plain, `${target.baseUrl}/hook`)).toMatchObject({
      kind: 'refused',
      reason: 'must use https',
    });
    const tls = await post(plain, `https://127.0.0.1:${portOf(target)}/hook`);
    expect(tls.kind).toBe('refused');
    const localhost = await post(plain, 'https://localhost/hook');
    expect(localhost).toMatchObject({ kind: 'refused', reason: expect.stringContaining('loopback') });
    expect(target.connections()).toBe(0);
  });

  it('with allowLoopback, sends plain http to loopback only', async () => {
    const dns = scriptedResolver({ 'public.example.com': [[PUBLIC_V4]] });
    const c = client({ allowLoopback: true, resolve: dns.resolve });
    expect(await post(c, 'http://10.0.0.1/')).toMatchObject({ kind: 'refused' });
    expect(await post(c, 'http://public.example.com/')).toMatchObject({
      kind: 'refused',
      reason: 'plain http is only allowed to loopback',
    });
  });

  it('delivers a request that the standardwebhooks package verifies to a real local server', async () => {
    const secret = generateWebhookSecret();
    const seen: { verified: unknown; path?: string | undefined }[] = [];
    const target = await server((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        seen.push({
          verified: new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), headers),
          path: req.url,
        });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      });
    });
    const body = JSON.stringify({
      type: 'message.sent',
      timestamp: '2026-12-01T08:00:00Z',
      data: { id: 'msg_1' },
    });
    const headers = signWebhook({ id: 'wh_1', timestamp: Math.floor(Date.now() / 1000), body }, [secret]);

    const result = await client({ allowLoopback: true }).deliver({
      url: `${target.baseUrl}/hooks/wecom?team=ops`,
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    });

    expect(result).toMatchObject({ kind: 'response', status: 200, excerpt: 'thanks' });
    expect((result as { latencyMs: number }).latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual([{ verified: JSON.parse(body), path: '/hooks/wecom?team=ops' }]);
  });

  it('connects TLS to the checked address while verifying the certificate against the host name', async () => {
    const https = createHttpsServer({ ...TLS }, (_req, res) => res.writeHead(200).end('tls ok'));
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => https.close(() => resolve())));
    const port = (https.address() as AddressInfo).port;
    const dns = scriptedResolver({ 'hooks.test': [['127.0.0.1']], 'other.test': [['127.0.0.1']] });
    const c = client({ allowLoopback: true, resolve: dns.resolve, tls: { ca: TLS.cert } });

    const good = await post(c, `https://hooks.test:${port}/`, { allowedPorts: [port] });
    expect(good).toMatchObject({ kind: 'response', status: 200, excerpt: 'tls ok' });
    // Same address, a name the certificate does not cover: the name, not the IP, is what TLS checks.
    const wrongName = await post(c, `https://other.test:${port}/`, { allowedPorts: [port] });
    expect(wrongName).toMatchObject({ kind: 'failed', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });
});

describe('createWebhookClient › responses', () => {
  it('never follows a redirect', async () => {
    let finalHits = 0;
    const target = await server((req, res) => {
      if (req.url === '/final') finalHits++;
      res.writeHead(req.url === '/start' ? 302 : 200, { location: '/final' }).end();
    });
    const result = await post(client({ allowLoopback: true }), `${target.baseUrl}/start`);
    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(finalHits).toBe(0);
    expect(classifyDelivery(result)).toMatchObject({
      outcome: 'retry',
      reason: expect.stringContaining('redirect'),
    });
  });

  it('reads only a bounded start of a huge response and keeps a short, printable excerpt', async () => {
    const target = await server((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('boom\r\n\u0000');
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (res.write(chunk)) {
          /* fill the socket until the client stops reading */
        }
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      pump();
    });
    const result = await post(client({ allowLoopback: true, maxResponseBytes: 1024 }), `${target.baseUrl}/`);
    expect(result).toMatchObject({ kind: 'response', status: 500 });
    const { excerpt } = result as { excerpt: string };
    expect(excerpt.startsWith('boom ')).toBe(true);
    expect(excerpt).toHaveLength(256);
  });

  it('passes on Retry-After from a 429', async () => {
    const target = await server((_req, res) => res.writeHead(429, { 'retry-after': '45' }).end('slow down'));
    const result = await post(client({ allowLoopback: true }), `${target.baseUrl}/`);
    expect(result).toMatchObject({
      kind: 'response',
      status: 429,
      retryAfterSeconds: 45,
      excerpt: 'slow down',
    });
    expect(classifyDelivery(result)).toMatchObject({ outcome: 'retry', retryAfterSeconds: 45 });
  });

  it('gives up on a receiver that never answers after headersTimeoutMs', async () => {
    const target = await server(() => {
      /* never answers */
    });
    const result = await post(client({ allowLoopback: true, headersTimeoutMs: 150 }), `${target.baseUrl}/`);
    expect(result).toMatchObject({ kind: 'failed', code: 'UND_ERR_HEADERS_TIMEOUT' });
  });

  it('gives up on a connection that never completes after totalTimeoutMs', async () => {
    const hang: buildConnector.connector = () => undefined;
    const dns = scriptedResolver({ 'slow.example.com': [[PUBLIC_V4]] });
    const started = Date.now();
    const result: DeliveryResult = await post(
      client({ resolve: dns.resolve, connector: hang, totalTimeoutMs: 200 }),
      'https://slow.example.com/',
    );
    expect(result).toMatchObject({ kind: 'failed', code: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(classifyDelivery(result).outcome).toBe('retry');
  });

  it('reports a refused connection as a failure to retry', async () => {
    const port = await deadPort();
    const result = await post(client({ allowLoopback: true }), `http://127.0.0.1:${port}/`);
    expect(result).toMatchObject({ kind: 'failed', code: 'ECONNREFUSED' });
  });
});
