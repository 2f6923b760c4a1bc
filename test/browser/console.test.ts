import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newDevKey } from '#local/dev-config.js';
import {
  describeBrowser,
  launchBrowser,
  openPage,
  screenshot,
  type WatchedPage,
} from '#test/helpers/browser.js';
import { deadInQueue, messageStore } from '#test/helpers/dead-letters.js';
import { scaledMinutes, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import { ROBOT_KEY } from '#test/helpers/robots.js';

/** Pages load over the local stack on a busy 2-core machine: wait for what they show, within bounds. */
const POLL = { timeout: 20_000 };

/** The operator console in a real browser against the local stack, as an operator uses it. */
describeBrowser('operator console', () => {
  let gw: TestGateway;
  let browser: Browser;
  let sentId: string;
  let cardId: string;
  const admin = newDevKey();
  /** May read billing only, and do nothing else: no recall, no card update, no admin. */
  const reader = newDevKey();
  let billingId: string;
  let hostileId: string;
  /** May use group robot `oncall` only, as a team that started with a robot. */
  const robotOnly = newDevKey();
  let robotId: string;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startTestGateway({
        ...scaledMinutes(),
        apps: ['ops', 'billing'],
        // The test's own key has the default scopes (no admin); this one may use the DLQ of ops.
        extraApiKeys: [
          { name: 'admin', sha256: admin.sha256, apps: ['ops'], scopes: ['admin', 'messages:read'] },
          { name: 'billing-reader', sha256: reader.sha256, apps: ['billing'], scopes: ['messages:read'] },
          {
            name: 'oncall-robot',
            sha256: robotOnly.sha256,
            apps: [],
            robots: ['oncall'],
            scopes: ['messages:write', 'messages:read', 'messages:recall'],
          },
        ],
        configure: (c) => {
          c.robots = {
            oncall: { key: ROBOT_KEY, quota: { perMinute: 20, safetyMargin: 0.2, normalShare: 0.8 } },
          };
        },
      }),
      launchBrowser(),
    ]);
    const sent = await gw.post('/v1/messages', text('磁盘告警：db-1 使用率 91%', 'ZhangSan'));
    const other = await gw.post('/v1/messages', text('another one', 'lisi'));
    const card = await gw.post('/v1/messages', {
      app: 'ops',
      touser: 'wangwu',
      msgtype: 'template_card',
      template_card: {
        card_type: 'button_interaction',
        main_title: { title: '发布 4711 到生产环境？', desc: 'api-server v2.31.0' },
        horizontal_content_list: [{ keyname: '申请人', value: 'zhangsan' }],
        button_list: [
          { text: '批准', style: 1, key: 'approve' },
          { text: '驳回', style: 2, key: 'reject' },
        ],
      },
    });
    const billing = await gw.post('/v1/messages', { ...text('invoice 88 paid', 'zhaoliu'), app: 'billing' });
    // What an attacker may put in a message: markup, handlers and script links in every field that is shown.
    const hostile = await gw.post('/v1/messages', {
      app: 'ops',
      touser: 'mallory',
      msgtype: 'textcard',
      textcard: {
        title: '<img src=x onerror="window.__pwned=1">',
        description:
          '<div class="gray" onclick="window.__pwned=2">灰色</div><script>window.__pwned=3</script>' +
          '<a href="javascript:window.__pwned=4">js</a>',
        url: 'https://ok.example/card',
      },
    });
    const robotPost = await gw.post(
      '/v1/messages',
      {
        robot: 'oncall',
        msgtype: 'markdown_v2',
        markdown_v2: { content: '## db-1\n| disk | 91% |\n|---|---|' },
      },
      { authorization: `Bearer ${robotOnly.key}` },
    );
    expect(robotPost.status, JSON.stringify(robotPost.body)).toBe(202);
    robotId = robotPost.body.id;
    sentId = sent.body.id;
    cardId = card.body.id;
    billingId = billing.body.id;
    hostileId = hostile.body.id;
    await Promise.all(
      [sentId, other.body.id, cardId, billingId, hostileId].map((id) => gw.waitForStatus(id, ['sent'])),
    );
    await waitFor(
      async () =>
        (await gw.get(`/v1/messages/${robotId}`, { authorization: `Bearer ${robotOnly.key}` })).body
          .status === 'sent',
    );
    // wangwu presses 批准 in WeCom: the simulator posts the signed callback, which ties it to the message.
    await gw.stack.simulator?.click({ userId: 'wangwu', taskId: cardId, key: 'approve' });
    await waitFor(async () => (await gw.get(`/v1/messages/${cardId}`)).body.wecom_events.length > 0);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stack.stop();
  });

  const signIn = async (watched: WatchedPage, path = '/console', key = gw.key) => {
    await watched.page.goto(`${gw.stack.apiUrl}${path}`);
    await watched.page.getByLabel('API key').fill(key);
    await watched.page.getByRole('button', { name: 'Sign in' }).click();
    await watched.page
      .getByRole('link', { name: 'Sign out' })
      .or(watched.page.getByTestId('sign-out'))
      .waitFor();
  };

  // Chromium logs every 4xx answer to fetch as a console error; the pages handle a 403 (a scope the key lacks) and a
  // 404 (another app's message), and the tests assert what they show instead.
  const handled = /^Failed to load resource: the server responded with a status of 40[34]\b/;
  const expectClean = (watched: WatchedPage) => {
    expect(watched.cspViolations).toEqual([]);
    expect(watched.errors.filter((e) => !handled.test(e))).toEqual([]);
  };

  it('signs in, finds a message by its recipient, and shows it sent with its timeline', async () => {
    const watched = await openPage(browser);
    const { page, context } = watched;
    await signIn(watched);
    await page.getByTestId('messages').waitFor();
    await screenshot(page, 'console-messages');

    await page.getByLabel('Recipient').fill('zhangsan');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/touser=zhangsan/);
    const rows = page.getByTestId('messages').locator('tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(1);

    await rows.first().getByRole('link').click();
    await page.waitForURL(new RegExp(`/console/messages/${sentId}$`));
    await expect.poll(() => page.getByTestId('status').first().textContent(), POLL).toBe('sent');
    const timeline = page.getByTestId('timeline').locator('li');
    expect(await timeline.allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('queued'), expect.stringContaining('sent')]),
    );
    expect(await page.getByTestId('msgid').textContent()).not.toBe('—');
    expect(await page.getByTestId('preview').getByTestId('message').textContent()).toContain('磁盘告警');
    await screenshot(page, 'console-message');

    // The key is in the tab's sessionStorage only: never in the URL, a cookie or localStorage.
    expect(page.url()).not.toContain(gw.key);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate('JSON.stringify(localStorage)')).toBe('{}');
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([gw.key]);

    // A shared link opens the same filtered view in a new tab (which signs in anew: sessionStorage is per tab).
    const shared = await openPage(browser);
    await signIn(shared, `/console/messages?app=ops&touser=zhangsan`);
    await expect.poll(() => shared.page.getByTestId('messages').locator('tbody tr').count(), POLL).toBe(1);
    expectClean(shared);
    await shared.context.close();

    await page.getByTestId('sign-out').click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expectClean(watched);
    await context.close();
  });

  it('shows a template card as WeCom does, the press that came back, and the card update it allows', async () => {
    const watched = await openPage(browser);
    await signIn(watched, `/console/messages/${cardId}`);
    const { page } = watched;
    await page.getByTestId('wecom-events').waitFor();
    expect(await page.getByTestId('wecom-events').textContent()).toMatch(
      /template_card_event.*wangwu.*key approve/,
    );
    const card = page.getByTestId('preview').getByTestId('message');
    expect(await card.getAttribute('data-msgtype')).toBe('template_card');
    expect(await card.textContent()).toContain('发布 4711 到生产环境？');
    expect(await page.getByRole('button', { name: 'Update card' }).isVisible()).toBe(true);
    await screenshot(page, 'console-card');
    expectClean(watched);
    await watched.context.close();
  });

  it('shows a key that may read one app only that app, and offers it no action it may not take', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await signIn(watched, '/console', reader.key);
    await expect.poll(() => page.getByTestId('key-name').textContent(), POLL).toBe('key billing-reader');
    const rows = page.getByTestId('messages').locator('tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await page.getByLabel('App or robot').locator('option').allTextContents()).toEqual(['billing']);
    expect(await rows.first().textContent()).toContain(billingId);

    // Another app's message: not found for this key, as if it did not exist.
    await page.goto(`${gw.stack.apiUrl}/console/messages/${sentId}`);
    await expect.poll(() => page.getByTestId('error').textContent(), POLL).toMatch(/Could not load/);
    // Its own sent message: no Recall (the key lacks messages:recall), and no action section at all.
    await page.goto(`${gw.stack.apiUrl}/console/messages/${billingId}`);
    await expect.poll(() => page.getByTestId('status').first().textContent(), POLL).toBe('sent');
    expect(await page.getByTestId('recall').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Actions' }).count()).toBe(0);

    await page.goto(`${gw.stack.apiUrl}/console/events`);
    await page.getByTestId('events').waitFor();
    const feed = await page.getByTestId('events').textContent();
    expect(feed).toContain('billing');
    expect(feed).not.toContain('ops');
    expectClean(watched);
    await watched.context.close();
  });

  it('lists a group robot’s messages for a key with a robot and no app, and shows one as the group sees it', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await signIn(watched, '/console', robotOnly.key);
    const rows = page.getByTestId('messages').locator('tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await page.getByLabel('App or robot').locator('option').allTextContents()).toEqual([
      'robot oncall',
    ]);
    // A robot posts to its group chat: no recipient to search by, and the robot's own types.
    expect(await page.getByLabel('Recipient').count()).toBe(0);
    expect(await page.getByLabel('Type').locator('option').allTextContents()).toContain('markdown_v2');
    expect(await rows.first().textContent()).toContain('group chat of robot oncall');

    await page.getByLabel('Type').selectOption('markdown_v2');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('robot'), POLL).toBe('oncall');
    expect(new URL(page.url()).searchParams.get('msgtype')).toBe('markdown_v2');
    await expect.poll(() => rows.count(), POLL).toBe(1);

    await rows.first().getByRole('link').click();
    await expect.poll(() => page.getByTestId('robot').textContent(), POLL).toBe('oncall');
    expect(await page.getByTestId('status').first().textContent()).toBe('sent');
    expect(await page.getByTestId('preview').getByTestId('message').getAttribute('data-msgtype')).toBe(
      'markdown_v2',
    );
    expect(await page.getByTestId('preview').textContent()).toContain('db-1');
    // WeCom has no recall for a robot's post, whatever the key's scopes, and answers it without a msgid.
    expect(await page.getByTestId('recall').count()).toBe(0);
    expect(await page.getByTestId('msgid').first().textContent()).toBe('—');
    expect(await page.getByText('without a msgid').count()).toBe(1);

    // Apps shows the robot's state and rolling minute, not a dead end.
    await page.getByRole('link', { name: 'Apps' }).click();
    const robot = page.getByTestId('robot-oncall');
    await expect.poll(() => robot.getByTestId('robot-state').textContent(), POLL).toBe('active');
    expect(await robot.getByTestId('quota').first().textContent()).toMatch(/robot-minute/);
    expect(await page.getByText('may read no apps').count()).toBe(0);

    // Events lists the robot's latest messages under its name.
    await page.getByRole('link', { name: 'Events' }).click();
    const feed = page.getByTestId('events').locator('tbody tr');
    await expect.poll(() => feed.count(), POLL).toBeGreaterThan(0);
    expect(await feed.first().textContent()).toContain('robot oncall');
    expect(await page.locator('main').textContent()).not.toContain('undefined');
    expectClean(watched);
    await watched.context.close();
  });

  it('works from the keyboard: sign in, move between pages, open a message', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${gw.stack.apiUrl}/console`);
    await page.getByLabel('API key').focus();
    await page.keyboard.type(gw.key);
    await page.keyboard.press('Enter');
    await page.getByTestId('messages').waitFor();
    // Tab from the top of a freshly loaded page reaches the skip link first, then the navigation.
    await page.reload();
    await page.getByTestId('messages').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    const focusedText = () => page.evaluate('document.activeElement && document.activeElement.textContent');
    for (let i = 0; i < 6 && (await focusedText()) !== 'Apps'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/apps$/);
    await page.goBack();
    await page.getByTestId('messages').waitFor();
    await page.getByTestId('messages').locator('tbody tr a').first().focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/messages\/msg_/);
    await page.getByTestId('timeline').waitFor();
    expectClean(watched);
    await watched.context.close();
  });

  it('previews hostile content posted through the API without running any of it', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await signIn(watched, `/console/messages/${hostileId}`);
    const preview = page.getByTestId('preview').locator('.preview-phone');
    await expect.poll(() => preview.textContent(), POLL).toContain('灰色');
    for (const el of await preview.locator('*').all()) {
      if (await el.isVisible()) await el.hover().catch(() => {});
    }
    await preview.getByText('灰色', { exact: true }).click();
    // The description's script link is not a link any more: its text is all that is left.
    expect(await preview.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(dialogs).toEqual([]);
    // What the page built from the content: elements and attributes, whatever their text says.
    const dom = await preview.evaluate(
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
    for (const bad of ['script', 'img', 'iframe', 'svg']) expect(dom.tags).not.toContain(bad);
    expect(dom.attrs.filter((a) => /^(on|style=|src=|srcdoc)/i.test(a))).toEqual([]);
    expect(dom.attrs.filter((a) => /^href=(?!https?:)/i.test(a))).toEqual([]);
    expect(await preview.textContent()).toContain('<img src=x onerror="window.__pwned=1">');
    expectClean(watched);
    await watched.context.close();
  });

  it('refuses a wrong key with a message that says so', async () => {
    const watched = await openPage(browser);
    await watched.page.goto(`${gw.stack.apiUrl}/console`);
    await watched.page.getByLabel('API key').fill('wgw_not_a_key');
    await watched.page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => watched.page.getByTestId('sign-in-error').textContent(), POLL)
      .toMatch(/not accepted/);
    expect(watched.cspViolations).toEqual([]);
    await watched.context.close();
  });

  it('shows apps with their state and quota gauges, and the DLQ without the admin scope says so', async () => {
    const watched = await openPage(browser);
    await signIn(watched, '/console/apps');
    await watched.page.getByTestId('app-ops').getByTestId('app-state').waitFor();
    expect(await watched.page.getByTestId('app-ops').getByTestId('app-state').textContent()).toBe('active');
    await screenshot(watched.page, 'console-apps');
    await watched.page.getByRole('link', { name: 'DLQ' }).click();
    await expect
      .poll(() => watched.page.getByTestId('error').textContent(), POLL)
      .toMatch(/lacks the admin scope/);
    await watched.page.getByRole('link', { name: 'Events' }).click();
    await watched.page.getByTestId('events').waitFor();
    expect(await watched.page.getByTestId('events').textContent()).toContain('text message');
    expectClean(watched);
    await watched.context.close();
  });

  it('shows a scheduled message with its send_at, and cancels it so it is never sent', async () => {
    const sendAt = new Date(gw.stack.clock.now() + 3_600_000).toISOString();
    const scheduled = await gw.post('/v1/messages', text('in an hour', 'console-later', { send_at: sendAt }));
    expect(scheduled.body.status).toBe('scheduled');
    const watched = await openPage(browser);
    const { page } = watched;
    // The list says when it leaves; its row leads to its page.
    await signIn(watched, '/console/messages?app=ops&status=scheduled');
    const row = page.getByTestId('messages').locator('tr', { hasText: scheduled.body.id });
    await expect.poll(() => row.getByTestId('release-at').textContent(), POLL).toMatch(/^leaves \d{4}-/);
    await row.getByRole('link').click();
    await expect.poll(() => page.getByTestId('status').first().textContent(), POLL).toBe('scheduled');
    expect(await page.getByText('Send at').count()).toBeGreaterThan(0);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('cancel').click();
    await expect
      .poll(async () => (await gw.get(`/v1/messages/${scheduled.body.id}`)).body.status, POLL)
      .toBe('canceled');
    await expect.poll(() => page.getByTestId('status').first().textContent(), POLL).toBe('canceled');
    expect(gw.stack.timers.size()).toBe(0);
    expectClean(watched);
    await watched.context.close();
  });

  it('redrives a dead message from the DLQ page, and says why another cannot be redriven safely', async () => {
    const store = messageStore(gw);
    const dead = await deadInQueue(gw, store, { app: 'ops', user: 'console-dlq', content: 'bring me back' });
    const old = await deadInQueue(gw, store, {
      app: 'ops',
      user: 'console-dlq-old',
      content: 'lost two hours ago',
      lostAnswerAgoMs: 2 * 3_600_000,
    });
    const watched = await openPage(browser);
    const { page } = watched;
    await signIn(watched, '/console/dlq', admin.key);
    await page.getByTestId('dead-letters').waitFor();
    const oldRow = page.getByTestId('dead-letters').locator('tr', { hasText: old.id });
    expect(await oldRow.getByTestId('not-redrivable').textContent()).toMatch(/duplicate check/);
    await screenshot(page, 'console-dlq');

    await page.getByTestId(`redrive-${dead.id}`).click();
    await expect
      .poll(() => page.getByTestId('redrive-result').first().textContent(), POLL)
      .toMatch(/^redriven/);
    expect((await gw.waitForStatus(dead.id, ['sent', 'failed', 'dead'])).status).toBe('sent');
    expect(gw.stack.simulator?.inbox('console-dlq').map((m) => m.payload)).toEqual([
      { content: 'bring me back' },
    ]);
    expectClean(watched);
    await watched.context.close();
  });

  it('fits a 390 px phone on every page: no sideways scrolling, no CSP violation, no page error', async () => {
    const watched = await openPage(browser, { width: 390, height: 844 });
    const { page } = watched;
    await signIn(watched);
    const pages = [
      '/console/messages?app=ops',
      `/console/messages/${sentId}`,
      '/console/apps',
      '/console/dlq',
      '/console/events',
    ];
    for (const path of pages) {
      await page.goto(`${gw.stack.apiUrl}${path}`);
      await page.locator('main *').first().waitFor();
      await page.waitForLoadState('networkidle');
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
    }
    await page.goto(`${gw.stack.apiUrl}/console/messages/${sentId}`);
    await page.getByTestId('timeline').waitFor();
    await screenshot(page, 'console-message-phone');
    expectClean(watched);
    await watched.context.close();
  });
});
