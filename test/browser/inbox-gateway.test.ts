import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeBrowser,
  launchBrowser,
  openPage,
  screenshot,
  type WatchedPage,
} from '#test/helpers/browser.js';
import {
  type JsonBody,
  scaledMinutes,
  startTestGateway,
  type TestGateway,
  text,
  waitFor,
} from '#test/helpers/gateway.js';
import { cardBody } from '#test/helpers/messages-factories.js';
import { robotMarkdown, withRobot } from '#test/helpers/robots.js';

/** Posted before the card's tests run, so their delivery overlaps those. */
const BOB_MESSAGES = [
  text('磁盘告警：/var 已用 91%，详情 https://grafana.example/d/disk?host=web-1 请处理', 'bob'),
  {
    app: 'ops',
    touser: 'bob',
    msgtype: 'markdown',
    markdown: {
      content:
        '## 发布完成\n**服务**: `api`\n> 版本 <font color="info">v2.3.1</font>\n' +
        '耗时 <font color="warning">12 分钟</font>，<font color="comment">无回滚</font>\n[查看流水线](https://ci.example/p/42)',
    },
  },
  {
    app: 'ops',
    touser: 'bob',
    msgtype: 'news',
    news: {
      articles: [
        {
          title: '本周值班安排',
          description: '请查看',
          url: 'https://wiki.example/oncall',
          picurl: 'https://img.example/a.png',
        },
        { title: '故障复盘：缓存雪崩', url: 'https://wiki.example/postmortem' },
      ],
    },
  },
];

/**
 * The inbox on the whole local stack: messages go in through POST /v1/messages and the sender, and a member's
 * press in the inbox comes back to the gateway as WeCom's encrypted card event.
 */
describeBrowser('simulator inbox on the local stack', () => {
  let gw: TestGateway;
  let browser: Browser;
  let phone: WatchedPage;
  let inbox: string;
  const bobIds: string[] = [];

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startTestGateway({ ...scaledMinutes(), configure: withRobot }),
      launchBrowser(),
    ]);
    inbox = gw.stack.simulator?.inboxUrl ?? '';
    phone = await openPage(browser, { width: 390, height: 844 });
    for (const body of BOB_MESSAGES) {
      const sent = await gw.post('/v1/messages', body);
      expect(sent.status).toBe(202);
      bobIds.push(sent.body.id);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stack.stop();
  });

  const noHorizontalScroll = () =>
    phone.page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth');

  describe('a button_interaction card', () => {
    let id: string;

    it('is shown with its title, selection and buttons at /__sim/ui/<userid>/latest', async () => {
      const sent = await gw.post('/v1/messages', {
        ...(cardBody('button_interaction', { task_id: undefined }) as Record<string, unknown>),
        touser: 'alice',
      });
      expect(sent.status).toBe(202);
      id = sent.body.id;
      await gw.waitForStatus(id, ['sent']);

      const { page } = phone;
      await page.goto(`${inbox}/alice/latest`);
      const card = page.getByTestId('template-card');
      await expect.poll(() => card.getAttribute('data-card-type')).toBe('button_interaction');
      expect(await page.getByTestId('card-main-title').textContent()).toContain('欢迎使用企业微信');
      expect(await page.getByTestId('card-button').allTextContents()).toEqual(['按钮1', '按钮2']);
      expect(await page.getByTestId('card-link-button').getAttribute('href')).toBe(
        'https://work.weixin.qq.com/',
      );
      expect(await noHorizontalScroll()).toBe(true);
      await screenshot(page, 'inbox-card');
    });

    it('sends the press with the selection to the gateway, which records it on the message', async () => {
      const { page } = phone;
      await page.getByTestId('card-select').selectOption('btn_selection_id2');
      await page.getByRole('button', { name: '按钮2' }).click();
      await expect
        .poll(() => page.getByTestId('action-result').textContent())
        .toMatch(/HTTP 200 after 1 attempt/);

      let message: JsonBody;
      await waitFor(
        async () => {
          message = (await gw.get(`/v1/messages/${id}`)).body;
          return message.wecom_events?.length > 0;
        },
        10_000,
        () => JSON.stringify(message),
      );
      expect(message.wecom_events[0].event).toMatchObject({
        kind: 'template_card_event',
        from: 'alice',
        event_key: 'button_key_2',
        task_id: id,
      });
      expect(JSON.stringify(message.wecom_events[0].event)).toContain('btn_selection_id2');
    });

    it('shows the card as updated, without a reload, when the business updates it', async () => {
      const updated = await gw.post(`/v1/messages/${id}/card`, {
        button: { replace_name: '已处理 by alice' },
      });
      expect(updated.status).toBe(200);

      const { page } = phone;
      await expect.poll(() => page.getByTestId('card-done').textContent()).toBe('已处理 by alice');
      expect(await page.getByTestId('card-updated').count()).toBe(1);
      expect(await page.getByTestId('card-button').count()).toBe(0);
      // The member's own choice stays shown, not the card's default.
      expect(await page.getByTestId('card-select').inputValue()).toBe('btn_selection_id2');
      expect(await page.getByTestId('inbox-item').getAttribute('data-updated')).toBe('true');
      await screenshot(page, 'inbox-card-updated');
    });
  });

  it('submits a vote with the options the member ticked', async () => {
    const sent = await gw.post('/v1/messages', {
      ...(cardBody('vote_interaction', { task_id: undefined }) as Record<string, unknown>),
      touser: 'carol',
    });
    await gw.waitForStatus(sent.body.id, ['sent']);
    const { page } = phone;
    await page.goto(`${inbox}/carol/latest`);
    const options = page.getByTestId('card-option');
    await expect.poll(() => options.count()).toBe(2);
    // Keyboard only: the options and the submit button are reachable and operable without a pointer.
    await options.nth(1).focus();
    await page.keyboard.press('Space');
    await expect.poll(() => options.nth(1).isChecked()).toBe(true);
    await page.getByTestId('card-submit').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('card-done').textContent()).toBe('已提交');

    let message: JsonBody;
    await waitFor(async () => {
      message = (await gw.get(`/v1/messages/${sent.body.id}`)).body;
      return message.wecom_events?.length > 0;
    }, 10_000);
    expect(JSON.stringify(message.wecom_events[0].event)).toMatch(
      /option_id1.*option_id2|option_id2.*option_id1/,
    );
  });

  describe('text, markdown and news', () => {
    it('renders links, font colours and articles, in Chinese, at phone width', async () => {
      await Promise.all(bobIds.map((id) => gw.waitForStatus(id, ['sent'])));

      const { page } = phone;
      await page.goto(`${inbox}/bob`);
      await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(3);
      const msgtypes = await page
        .getByTestId('message')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-msgtype')));
      // The sender may deliver them in any order; newest first is the simulator test's to check.
      expect(msgtypes.sort()).toEqual(['markdown', 'news', 'text']);
      expect(
        await page
          .getByRole('link', { name: 'https://grafana.example/d/disk?host=web-1' })
          .getAttribute('href'),
      ).toBe('https://grafana.example/d/disk?host=web-1');
      const colour = (font: string) =>
        page
          .locator(`[data-font="${font}"]`)
          .evaluate(
            (el) =>
              (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(
                el,
              ).color,
          );
      expect(await colour('info')).toBe('rgb(7, 193, 96)');
      expect(await colour('warning')).toBe('rgb(245, 128, 62)');
      expect(await colour('comment')).toBe('rgb(136, 136, 136)');
      expect(await page.getByRole('heading', { name: '发布完成' }).count()).toBe(1);
      expect(await page.getByTestId('article').allTextContents()).toEqual([
        '图片本周值班安排请查看',
        '故障复盘：缓存雪崩',
      ]);
      expect(await noHorizontalScroll()).toBe(true);
      // A CJK glyph is as wide as a box only if a font has it: the text must lay out wider than one em per glyph pair.
      const width = await page
        .getByRole('heading', { name: '发布完成' })
        .evaluate((el) => el.getBoundingClientRect().width);
      expect(width).toBeGreaterThan(40);
      await screenshot(page, 'inbox-messages');
    });

    it('lists the members who received something in the picker', async () => {
      const { page } = phone;
      const options = await page.getByTestId('member-picker').locator('option').allTextContents();
      expect(options).toEqual(expect.arrayContaining(['alice (1)', 'bob (3)']));
    });
  });

  it('replies as the member: the app’s event feed gets the text', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const { page } = phone;
    await page.getByTestId('reply-input').fill('收到，马上处理');
    await page.getByTestId('reply-send').click();
    await expect.poll(() => page.getByTestId('reply-result').textContent()).toMatch(/as bob: .*HTTP 200/);

    const { body } = await gw.get(`/v1/events?app=ops&since=${since}`);
    // The card presses of the tests before may fall into the same second.
    const replies = body.events.filter((e: { event: { kind: string } }) => e.event.kind === 'text');
    expect(replies).toEqual([
      expect.objectContaining({
        event: expect.objectContaining({ kind: 'text', from: 'bob', content: '收到，马上处理' }),
      }),
    ]);
  });

  it('shows what a group robot posted in its group, picked from the groups after the members', async () => {
    const sent = await gw.post('/v1/messages', robotMarkdown('## 发布完成\n**服务**: `api`'));
    await gw.waitForStatus(sent.body.id, ['sent']);

    const { page } = phone;
    await page.goto(`${inbox}/group:oncall`);
    await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(1);
    expect(await page.getByTestId('message').getAttribute('data-msgtype')).toBe('markdown');
    expect(await page.getByRole('heading', { name: '发布完成' }).count()).toBe(1);
    expect(await page.getByTestId('reply-form').isHidden()).toBe(true);
    const options = await page.getByTestId('member-picker').locator('optgroup option').allTextContents();
    expect(options).toEqual(['oncall (1)']);
  });

  it('reports no CSP violation and no page error on any page', () => {
    expect(phone.cspViolations).toEqual([]);
    expect(phone.errors).toEqual([]);
  });
});
