import { describe, expect, it } from 'vitest';
import { buildWebApp } from '#lib/web/build.js';
import { STRICT_CSP, serveWebApp } from '#lib/web/serve.js';

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

  it('caches hashed assets for a year and revalidates index.html', () => {
    expect(index?.headers['cache-control']).toBe('no-cache');
    const js = serveWebApp(app, script ?? '');
    expect(js?.statusCode).toBe(200);
    expect(js?.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js?.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js?.body.toString()).toContain('fixture app');
    expect(serveWebApp(app, style ?? '')?.body.toString()).toContain('#123456');
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
    expect(serveWebApp(app, '/consoles')).toBeUndefined();
    expect(serveWebApp(app, '/v1/messages')).toBeUndefined();
  });
});
