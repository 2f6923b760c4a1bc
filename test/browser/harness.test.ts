import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, openPage } from '#test/helpers/browser.js';

// The console and inbox tests rely on this harness to see a CSP violation; here it must see one.
describeBrowser('browser harness', () => {
  let browser: Browser;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/app.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end("document.getElementById('out').textContent = '外部脚本已运行';");
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "default-src 'none'; script-src 'self'",
      });
      res.end(
        '<!doctype html><p id="out">-</p><p id="inline">-</p>' +
          "<script>document.getElementById('inline').textContent = 'ran'</script>" +
          '<script src="/app.js"></script>',
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  it('runs the external script, blocks the inline one and reports the violation', async () => {
    const { page, cspViolations, context } = await openPage(browser);
    await page.goto(`${base}/`);
    await expect.poll(() => page.textContent('#out')).toBe('外部脚本已运行');
    expect(await page.textContent('#inline')).toBe('-');
    await expect.poll(() => cspViolations.length).toBeGreaterThan(0);
    expect(cspViolations[0]).toMatch(/^script-src/);
    await context.close();
  });
});
