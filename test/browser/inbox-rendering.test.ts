import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import {
  describeBrowser,
  launchBrowser,
  openPage,
  screenshot,
  type WatchedPage,
} from '#test/helpers/browser.js';
import { cardBody } from '#test/helpers/messages-factories.js';
import { APP, getToken, postApi, send, startTestSimulator } from '#test/helpers/sim-fixtures.js';

/**
 * Message content is the sender's to choose: the inbox must show hostile content as text (or drop it), never run
 * it. The messages go through the simulator's send API, as the gateway's sender posts them.
 */
const HOSTILE = {
  text: {
    content:
      '<script>window.__pwned="text"</script><img src=x onerror="window.__pwned=\'img\'">' +
      ' <a href="javascript:window.__pwned=\'link\'">js-link</a> <a href="https://ok.example/t">安全链接</a>',
  },
  markdown: {
    content: [
      '# 标题',
      '<font color="x" onclick="window.__pwned=\'font\'">font-x</font>',
      '<font color="warning">橙色</font> [js-md](javascript:window.__pwned=\'md\') <img src=x onerror=alert(1)>',
    ].join('\n'),
  },
  textcard: {
    title: '<b onmouseover="alert(1)">卡片</b>',
    description:
      '<div class="gray" onclick="window.__pwned=\'div\'">灰色</div><img src=x onerror=alert(1)>' +
      '<script>alert("tc")</script><div class="evil highlight" style="color:red">高亮</div>',
    url: 'javascript:alert(1)',
  },
  mpnews: {
    articles: [
      {
        title: '文章',
        thumb_media_id: 'm1',
        digest: '<script>alert(1)</script>',
        content:
          '<p onclick="window.__pwned=\'p\'">段落</p><script>window.__pwned="mp"</script>' +
          '<iframe src="javascript:alert(1)"></iframe><p style="background:url(https://evil.example/x)">styled</p>' +
          '<a href="javascript:alert(1)">mp-js</a><a href="https://ok.example/a">mp-ok</a>' +
          '<img src="https://evil.example/track.png" onerror=alert(1)><svg onload=alert(1)></svg>' +
          '<style>body{display:none}</style><p title="a>b" onmouseover=alert(1)>title</p>',
        content_source_url: 'javascript:alert(1)',
      },
    ],
  },
  news: {
    articles: [{ title: '新闻', url: 'javascript:alert(1)', picurl: 'https://evil.example/pixel.png' }],
  },
  template_card: {
    card_type: 'button_interaction',
    task_id: 'hostile-1',
    main_title: { title: '<img src=x onerror=alert(1)>', desc: '"><script>alert(1)</script>' },
    source: { icon_url: 'https://evil.example/icon.png', desc: 'src' },
    button_list: [
      { text: '<b>按</b>', key: 'k"><script>', style: 9 },
      { type: 1, text: 'js-btn', url: 'javascript:alert(1)' },
    ],
  },
};

const noScroll = (page: WatchedPage['page']) =>
  page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth');

describeBrowser('simulator inbox', () => {
  let sim: WecomSimulator;
  let browser: Browser;
  let watched: WatchedPage;
  const dialogs: string[] = [];

  beforeAll(async () => {
    sim = await startTestSimulator({
      // Bob's 13th message in a minute is dropped; mallory stays below that.
      limits: { perMemberPerMinute: 12 },
      directory: {
        users: ['mallory', 'bob', 'carol', 'dave'],
        apps: { [APP.agentId]: { users: ['mallory', 'bob', 'dave'] } },
      },
    });
    const token = await getToken(sim);
    for (const [msgtype, content] of Object.entries(HOSTILE)) {
      const answer = await send(sim, token, {
        touser: 'mallory',
        agentid: APP.agentId,
        msgtype,
        [msgtype]: content,
      });
      expect(answer.errcode, msgtype).toBe(0);
    }
    const flagged = { enable_duplicate_check: 1, duplicate_check_interval: 600 };
    const toBob = (content: string, extra = {}) =>
      send(sim, token, { touser: 'bob', agentid: APP.agentId, msgtype: 'text', text: { content }, ...extra });
    const first = await toBob('第一条', flagged);
    await toBob('第一条', flagged);
    for (let i = 2; i <= 12; i++) await toBob(`第${i}条`);
    await send(sim, token, {
      touser: 'carol|bob',
      agentid: APP.agentId,
      msgtype: 'text',
      text: { content: 'x' },
    });
    await postApi(sim, 'recall', token, { msgid: first.msgid });
    await send(sim, token, {
      touser: 'mallory',
      agentid: APP.agentId,
      msgtype: 'template_card',
      template_card: { card_type: 'future_card', task_id: 'f1' },
    });
    for (const type of ['text_notice', 'news_notice', 'vote_interaction', 'multiple_interaction'] as const) {
      const { template_card } = cardBody(type, type === 'vote_interaction' ? { 'checkbox.mode': 0 } : {});
      await send(sim, token, {
        touser: 'dave',
        agentid: APP.agentId,
        msgtype: 'template_card',
        template_card,
      });
    }
    browser = await launchBrowser();
    watched = await openPage(browser, { width: 390, height: 844 });
    watched.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  afterAll(async () => {
    await browser?.close();
    await sim?.stop();
  });

  describe('hostile content', () => {
    it('shows every message, runs none of it and loads nothing from the sender', async () => {
      const { page } = watched;
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      await page.goto(`${sim.inboxUrl}/mallory`);
      const items = page.getByTestId('inbox-item');
      await expect.poll(() => items.count()).toBe(Object.keys(HOSTILE).length + 1);
      for (const summary of await page.locator('.wr-mpnews-page summary').all()) await summary.click();
      // Whatever a handler could have been attached to gets the events that would fire it.
      for (const sel of [
        '.wr-textcard-desc div',
        '.wr-mpnews-content p',
        '.wr-markdown span',
        '.wr-card-title',
      ]) {
        for (const el of await page.locator(sel).all()) {
          await el.hover();
          await el.click();
        }
      }

      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(watched.cspViolations).toEqual([]);
      expect(watched.errors).toEqual([]);
      expect(requested.filter((u) => !u.startsWith(sim.url))).toEqual([]);
      const list = page.getByTestId('inbox-list');
      const dom = await list.evaluate(
        (el: {
          querySelectorAll(
            s: string,
          ): ArrayLike<{ attributes: ArrayLike<{ name: string; value: string }>; localName: string }>;
        }) => {
          const all = Array.from(el.querySelectorAll('*'));
          return {
            tags: [...new Set(all.map((e) => e.localName))],
            attrs: all.flatMap((e) => Array.from(e.attributes).map((a) => `${a.name}=${a.value}`)),
          };
        },
      );
      expect(dom.tags).not.toEqual(expect.arrayContaining(['script']));
      for (const bad of ['script', 'iframe', 'img', 'svg', 'b', 'font']) expect(dom.tags).not.toContain(bad);
      expect(dom.attrs.filter((a) => /^(on|style=|src=|srcdoc)/i.test(a))).toEqual([]);
      expect(dom.attrs.filter((a) => /^href=(?!https?:|\/__sim\/ui\/)/i.test(a))).toEqual([]);
      // Not part of what WeCom renders, so shown as the text that was sent.
      const text = await list.textContent();
      expect(text).toContain('<script>window.__pwned="text"</script>');
      expect(text).toContain('<font color="x" onclick="window.__pwned=\'font\'">font-x</font>');
      expect(text).toContain("[js-md](javascript:window.__pwned='md')");
      expect(text).toContain('不支持的消息类型: template_card future_card');
      await expect
        .poll(() => page.getByRole('link', { name: '安全链接' }).getAttribute('href'))
        .toBe('https://ok.example/t');
      expect(await page.getByRole('link', { name: 'mp-ok' }).getAttribute('href')).toBe(
        'https://ok.example/a',
      );
      expect(await page.locator('.wr-html-gray').textContent()).toBe('灰色');
      expect(await page.locator('.wr-html-highlight').getAttribute('class')).toBe('wr-html-highlight');
      expect(await page.locator('[data-font="warning"]').textContent()).toBe('橙色');
      await screenshot(page, 'inbox-hostile');
    });
  });

  describe('what WeCom did not deliver', () => {
    it('shows a recalled message, a suppressed duplicate, a silent drop and an invalid recipient', async () => {
      const { page } = watched;
      await page.goto(`${sim.inboxUrl}/bob`);
      await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(14);
      const kinds = await page
        .getByTestId('inbox-item')
        .evaluateAll((els) =>
          els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.kind),
        );
      // Newest first: carol|bob's text came after bob's minute limit (12) was used up.
      expect(kinds).toEqual(['drop', ...Array(11).fill('message'), 'duplicate', 'message']);
      expect(await page.getByTestId('recalled').count()).toBe(1);
      expect(await page.getByTestId('duplicate').textContent()).toMatch(/Suppressed duplicate of msgid/);
      expect(await page.getByTestId('drop').first().textContent()).toMatch(/member_minute/);

      await page.getByTestId('member-picker').selectOption('carol');
      await expect.poll(() => page.getByTestId('undelivered').count()).toBe(1);
      expect(await page.getByTestId('undelivered').textContent()).toMatch(/invaliduser/);
      expect(new URL(page.url()).pathname).toBe('/__sim/ui/carol');
      expect(watched.cspViolations).toEqual([]);
      expect(watched.errors).toEqual([]);
    });

    it('shows a new message without a reload', async () => {
      const { page } = watched;
      await page.goto(`${sim.inboxUrl}/mallory/latest`);
      await expect.poll(() => page.getByTestId('unknown-message').count()).toBe(1);
      const token = await getToken(sim);
      await send(sim, token, {
        touser: 'mallory',
        agentid: APP.agentId,
        msgtype: 'text',
        text: { content: '实时到达' },
      });
      await expect.poll(() => page.getByTestId('text-content').textContent()).toBe('实时到达');
      expect(await page.getByTestId('inbox-item').count()).toBe(1);
    });
  });

  describe('every template card type', () => {
    it('shows notices, menus, votes and drop-down choices as the client lays them out', async () => {
      const { page } = watched;
      await page.goto(`${sim.inboxUrl}/dave`);
      const cards = page.getByTestId('template-card');
      await expect.poll(() => cards.count()).toBe(4);
      const types = await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-card-type')));
      expect(types).toEqual(['multiple_interaction', 'vote_interaction', 'news_notice', 'text_notice']);

      const notice = cards.nth(3);
      expect(await notice.locator('.wr-card-emphasis-title').textContent()).toBe('100');
      expect(await notice.locator('dt').allTextContents()).toEqual([
        '邀请人',
        '企业微信官网',
        '企业微信下载',
        '员工信息',
      ]);
      expect(await notice.locator('.wr-card-jump').count()).toBe(2);
      const menu = notice.getByTestId('card-menu');
      await menu.focus();
      await page.keyboard.press('Enter');
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      expect(await notice.getByTestId('card-menu-item').allTextContents()).toEqual(['接受推送', '不再推送']);

      expect(await cards.nth(2).locator('.wr-card-image').count()).toBe(1);
      expect(await cards.nth(2).locator('.wr-card-vertical').count()).toBe(1);
      expect(await cards.nth(1).locator('input[type="radio"]').count()).toBe(2);
      expect(await cards.nth(1).getByTestId('card-submit').textContent()).toBe('提交');
      const selects = cards.nth(0).getByTestId('card-select');
      expect(await selects.count()).toBe(2);
      expect(await selects.nth(1).inputValue()).toBe('selection_id3');
      expect(await noScroll(page)).toBe(true);
      await screenshot(page, 'inbox-cards');
      expect(watched.cspViolations).toEqual([]);
      expect(watched.errors).toEqual([]);
    });
  });
});
