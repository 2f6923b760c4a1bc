import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  describeBrowser,
  launchBrowser,
  openPage,
  screenshot,
  type WatchedPage,
} from '#test/helpers/browser.js';
import { scaledMinutes, startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';

const POLL = { timeout: 20_000 };

/**
 * A template card's round trip, both faces at once: the member presses a button in the simulator inbox, the
 * operator sees the press in the console and updates the card there, and the member's card shows the update.
 */
describeBrowser('a template card between the inbox and the console', () => {
  let gw: TestGateway;
  let browser: Browser;
  let member: WatchedPage;
  let operator: WatchedPage;
  let id: string;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(scaledMinutes()), launchBrowser()]);
    [member, operator] = await Promise.all([
      openPage(browser, { width: 390, height: 844 }),
      openPage(browser, { width: 1280, height: 900 }),
    ]);
    const sent = await gw.post('/v1/messages', {
      app: 'ops',
      touser: 'zhaoliu',
      msgtype: 'template_card',
      template_card: {
        card_type: 'button_interaction',
        main_title: { title: '上线审批：payments v3.2', desc: '变更窗口 22:00' },
        button_list: [
          { text: '同意', style: 1, key: 'approve' },
          { text: '拒绝', style: 2, key: 'reject' },
        ],
      },
    });
    expect(sent.status).toBe(202);
    id = sent.body.id;
    await gw.waitForStatus(id, ['sent']);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stack.stop();
  });

  it('carries the press to the console and the console’s update back to the member', async () => {
    // The member presses 同意 in the inbox.
    await member.page.goto(`${gw.stack.simulator?.inboxUrl}/zhaoliu/latest`);
    await member.page.getByRole('button', { name: '同意' }).click();
    await waitFor(async () => (await gw.get(`/v1/messages/${id}`)).body.wecom_events.length > 0, 15_000);

    // The operator sees it on the message's page and replaces the buttons.
    await operator.page.goto(`${gw.stack.apiUrl}/console/messages/${id}`);
    await operator.page.getByLabel('API key').fill(gw.key);
    await operator.page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => operator.page.getByTestId('wecom-events').textContent(), POLL)
      .toMatch(/zhaoliu.*approve/);
    await operator.page.getByLabel('Replace the card’s buttons with').fill('已同意（值班长）');
    await operator.page.getByRole('button', { name: 'Update card' }).click();

    // The member's card shows it without a reload; the console's timeline records it.
    const item = member.page.getByTestId('inbox-item').first();
    await expect.poll(() => item.getAttribute('data-updated'), POLL).toBe('true');
    await expect.poll(() => item.textContent(), POLL).toContain('已同意（值班长）');
    await expect
      .poll(() => operator.page.getByTestId('timeline').textContent(), POLL)
      .toMatch(/card_updated.*已同意（值班长）/);
    // The console's preview shows the card as the member now sees it: the buttons gave way to the text.
    const preview = operator.page.getByTestId('preview');
    await expect.poll(() => preview.textContent(), POLL).toContain('已同意（值班长）');
    expect(await preview.getByRole('button', { name: '同意', exact: true }).count()).toBe(0);
    await screenshot(member.page, 'roundtrip-inbox');
    await screenshot(operator.page, 'roundtrip-console');

    for (const page of [member, operator]) {
      expect(page.cspViolations).toEqual([]);
      expect(page.errors).toEqual([]);
    }
  });
});
