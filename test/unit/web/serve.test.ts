import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { WebApp } from '#lib/web/assets.js';
import { buildWebApp } from '#lib/web/build.js';
import { acceptsGzip, STRICT_CSP, serveWebApp } from '#lib/web/serve.js';

describe('a built web app, served', async () => {
  const app = await buildWebApp({ entry: 'test/fixtures/web/main.ts', basePath: '/console', title: 'T <&>' });
  const index = serveWebApp(app, '/console');
  const html = index?.body.toString() ?? '';
  const [, script] = /src="([^"]+)"/.exec(html) ?? [];
  const [, style] = /href="([^"]+)"/.exec(html) ?? [];

  it('links a content-hashed script and stylesheet under the base path, with no inline code', () => {
    expect(script).toMatch(/^\/console\/assets\/main-[A-Z0-9]+\.js$/);
    expect(style).toMatch(/^\/console\/assets\/main-[A-Z0-9]+\.css$/);
    expect(html).not.toMatch(/<script>|<style>|\son\w+=/);
    expect(html).toContain('<title>T &#60;&#38;&#62;</title>');
  });

  it('caches hashed assets for a year and never index.html', () => {
    expect(index?.headers['cache-control']).toBe('no-store');
    const js = serveWebApp(app, script ?? '');
    expect(js?.statusCode).toBe(200);
    expect(js?.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js?.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js?.body.toString()).toContain('fixture app');
    expect(serveWebApp(app, style ?? '')?.body.toString()).toContain('#123456');
  });

  it('gzips what is worth it for a client that accepts gzip, and only then', () => {
    const big: WebApp = {
      basePath: '/console',
      assets: [
        {
          path: 'assets/big-1.js',
          contentType: 'text/javascript; charset=utf-8',
          base64: Buffer.from('console.log("a line of the app");\n'.repeat(200)).toString('base64'),
          immutable: true,
        },
      ],
    };
    const path = '/console/assets/big-1.js';
    const plain = serveWebApp(big, path);
    const zipped = serveWebApp(big, path, { acceptEncoding: 'br;q=1, gzip;q=0.8' });
    expect(zipped?.headers['content-encoding']).toBe('gzip');
    expect(zipped?.headers.vary).toBe('accept-encoding');
    expect(gunzipSync(zipped?.body ?? Buffer.alloc(0)).equals(plain?.body ?? Buffer.alloc(1))).toBe(true);
    expect(zipped?.body.length).toBeLessThan((plain?.body.length ?? 0) / 10);
    expect(plain?.headers['content-encoding']).toBeUndefined();
    expect(serveWebApp(big, path, { acceptEncoding: 'gzip;q=0, br' })?.headers['content-encoding']).toBe(
      undefined,
    );
    // The fixture app's script is a few bytes: not worth a gzip frame.
    expect(serveWebApp(app, script ?? '', { acceptEncoding: 'gzip' })?.headers['content-encoding']).toBe(
      undefined,
    );
  });

  it('tells which encodings a client takes', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('GZIP;Q=0.5')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('br')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it('sends the strict CSP, nosniff and no-referrer on every answer', () => {
    for (const path of ['/console', '/console/messages/x', script ?? '', '/console/assets/missing.js']) {
      const r = serveWebApp(app, path);
      expect(r?.headers['content-security-policy']).toBe(STRICT_CSP);
      expect(r?.headers['x-content-type-options']).toBe('nosniff');
      expect(r?.headers['referrer-policy']).toBe('no-referrer');
    }
    expect(STRICT_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it("answers the app's own routes with index.html, a missing asset with 404, other paths not at all", () => {
    expect(serveWebApp(app, '/console/messages/01J')?.body.toString()).toBe(html);
    expect(serveWebApp(app, '/console/assets/gone-1234.js')?.statusCode).toBe(404);
    // A route that merely starts with assets/ (the inbox's member named `assets`) is the page.
    expect(serveWebApp(app, '/console/assets/latest')?.body.toString()).toBe(html);
    expect(serveWebApp(app, '/consoles')).toBeUndefined();
    expect(serveWebApp(app, '/v1/messages')).toBeUndefined();
  });
});
