import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRICT_CSP } from '#lib/web/index.js';
import { startTestGateway, type TestGateway } from '#test/helpers/gateway.js';

describe('the operator console on the local stack', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.stack.stop());

  const fetchPath = (path: string) => fetch(`${gw.stack.apiUrl}${path}`);

  it('answers /console without an API key, with the strict CSP, nosniff and no-referrer, uncached', async () => {
    const res = await fetchPath('/console');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(STRICT_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toMatch(/<script type="module" src="\/console\/assets\/main-\w+\.js">/);
  });

  it('serves deep links with the page, and hashed assets cached immutably', async () => {
    const html = await (await fetchPath('/console/messages/01JXYZ?app=ops')).text();
    const [, script] = /src="([^"]+)"/.exec(html) ?? [];
    const [, style] = /href="([^"]+\.css)"/.exec(html) ?? [];
    for (const path of [script, style]) {
      const res = await fetchPath(path ?? '');
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toBe(STRICT_CSP);
      // fetch asks for gzip (and undoes it): what a browser on a phone downloads is the compressed file.
      expect(res.headers.get('content-encoding')).toBe('gzip');
    }
    expect((await fetchPath('/console/assets/main-MISSING.js')).status).toBe(404);
  });

  it('leaves the API as it was: the v1 routes still ask for a key', async () => {
    expect((await fetchPath('/v1/messages?app=ops')).status).toBe(401);
    expect((await fetchPath('/consoles')).status).toBe(404);
  });
});
