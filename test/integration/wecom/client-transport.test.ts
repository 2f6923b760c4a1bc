import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WecomTransportError } from '#lib/wecom/index.js';
import { createUndiciWecomClient } from '#lib/wecom/undici.js';
import { rejectionOf } from '#test/helpers/thrown.js';
import { deadPort, startLocalServer } from '#test/helpers/unit-http.js';

const TOKEN = 'ACCESS-TOKEN-5e1d-secret';

describe('WecomClient on real loopback sockets', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const track = <T extends { close(): Promise<void> }>(thing: T): T => {
    cleanups.push(() => thing.close());
    return thing;
  };

  it('reports a headers timeout as UND_ERR_HEADERS_TIMEOUT whose outcome is unknown', async () => {
    const held: ServerResponse[] = [];
    const server = track(await startLocalServer((_req, res) => held.push(res)));
    const wecom = track(createUndiciWecomClient({ baseUrl: server.baseUrl, headersTimeoutMs: 100 }));

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomTransportError);
    expect(err).toMatchObject({ inDoubt: true, transportCode: 'UND_ERR_HEADERS_TIMEOUT' });
    expect((err as Error).message).not.toContain(TOKEN);
    expect(held).toHaveLength(1);
  });

  it('reports a refused connection as not reached', async () => {
    const port = await deadPort();
    const wecom = track(createUndiciWecomClient({ baseUrl: `http://127.0.0.1:${port}` }));

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomTransportError);
    expect(err).toMatchObject({ inDoubt: false, transportCode: 'ECONNREFUSED' });
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('sends 200 concurrent messages over at most `connections` keep-alive sockets', async () => {
    let requests = 0;
    const server = track(
      await startLocalServer((req, res) => {
        requests++;
        req.resume();
        req.on('end', () => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ errcode: 0, errmsg: 'ok', msgid: `m${requests}` }));
        });
      }),
    );
    const wecom = track(createUndiciWecomClient({ baseUrl: server.baseUrl, connections: 4 }));

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => wecom.send(TOKEN, { touser: `user${i}`, msgtype: 'text' })),
    );

    expect(results).toHaveLength(200);
    expect(requests).toBe(200);
    expect(server.connections()).toBeGreaterThan(0);
    expect(server.connections()).toBeLessThanOrEqual(4);
  });
});
