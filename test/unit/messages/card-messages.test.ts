import { describe, expect, it } from 'vitest';
import {
  ascii,
  chinese,
  contentExamples,
  expectIssues,
  expectOnlyIssue,
  expectValid,
  messageBody,
} from '#test/helpers/messages-factories.js';

const textcard = (patch: Record<string, unknown>) =>
  messageBody('textcard', { textcard: { ...contentExamples().textcard, ...patch } });

describe('textcard message', () => {
  it('accepts the WeCom doc example', () => {
    expectValid(messageBody('textcard'));
  });

  it('accepts a textcard without btntxt', () => {
    expectValid(textcard({ btntxt: undefined }));
  });

  it.each(['title', 'description', 'url'])('names a missing %s', (field) => {
    const body = messageBody('textcard');
    delete (body.textcard as Record<string, unknown>)[field];
    expectOnlyIssue(body, `textcard.${field}`, 'required');
  });

  it('limits title to 128 bytes', () => {
    expectValid(textcard({ title: ascii(128) }));
    expectOnlyIssue(textcard({ title: ascii(129) }), 'textcard.title', '129 bytes, max 128');
  });

  it('limits description to 512 bytes, counting Chinese as 3 bytes', () => {
    expectValid(textcard({ description: chinese(170) }));
    expectOnlyIssue(textcard({ description: chinese(171) }), 'textcard.description', '513 bytes, max 512');
  });

  it('limits url to 2048 bytes', () => {
    const base = 'https://work.weixin.qq.com/?q=';
    expectValid(textcard({ url: base + ascii(2048 - base.length) }));
    expectOnlyIssue(
      textcard({ url: base + ascii(2049 - base.length) }),
      'textcard.url',
      '2049 bytes, max 2048',
    );
  });

  it('requires the url to carry its http(s) scheme', () => {
    expectOnlyIssue(
      textcard({ url: 'work.weixin.qq.com' }),
      'textcard.url',
      'must start with http:// or https://',
    );
  });

  it('limits btntxt to 4 characters, not bytes', () => {
    expectValid(textcard({ btntxt: '查看详情' }));
    expectOnlyIssue(textcard({ btntxt: '查看更多详情' }), 'textcard.btntxt', '6 characters, max 4');
  });
});

const article = (patch: Record<string, unknown>) => ({
  ...(contentExamples().news.articles as Record<string, unknown>[])[0],
  ...patch,
});
const news = (articles: unknown[]) => messageBody('news', { news: { articles } });

describe('news message', () => {
  it('accepts the WeCom doc example', () => {
    expectValid(messageBody('news'));
  });

  it('accepts 8 articles and rejects 9', () => {
    expectValid(news(Array.from({ length: 8 }, () => article({}))));
    expectOnlyIssue(news(Array.from({ length: 9 }, () => article({}))), 'news.articles', '9 articles, max 8');
  });

  it('rejects an empty article list', () => {
    expectOnlyIssue(news([]), 'news.articles', '0 articles, min 1');
  });

  it('names the exact article and field that is too long', () => {
    const articles = [article({}), article({}), article({}), article({ title: ascii(129) })];
    expectOnlyIssue(news(articles), 'news.articles[3].title', '129 bytes, max 128');
  });

  it('limits description, url and picurl', () => {
    const issues = expectIssues(
      news([
        article({
          description: ascii(513),
          url: `https://x.cn/${ascii(2040)}`,
          picurl: `https://x.cn/${ascii(2040)}`,
        }),
      ]),
    );
    expect(issues).toEqual([
      { field: 'news.articles[0].description', message: '513 bytes, max 512' },
      { field: 'news.articles[0].url', message: '2053 bytes, max 2048' },
      { field: 'news.articles[0].picurl', message: '2053 bytes, max 2048' },
    ]);
  });

  it('names a missing title', () => {
    expectOnlyIssue(news([article({ title: undefined })]), 'news.articles[0].title', 'required');
  });

  it('accepts a mini program link instead of a url', () => {
    expectValid(news([article({ url: undefined, appid: 'wx123123123123123', pagepath: 'pages/index' })]));
  });

  it('requires a url when there is no mini program link', () => {
    expectOnlyIssue(
      news([article({ url: undefined })]),
      'news.articles[0].url',
      'required unless appid and pagepath are set',
    );
  });

  it('requires appid and pagepath together', () => {
    expectOnlyIssue(
      news([article({ appid: 'wx123123123123123' })]),
      'news.articles[0].pagepath',
      'required when appid is set',
    );
    expectOnlyIssue(
      news([article({ pagepath: 'pages/index' })]),
      'news.articles[0].appid',
      'required when pagepath is set',
    );
  });
});

const mpArticle = (patch: Record<string, unknown>) => ({
  ...(contentExamples().mpnews.articles as Record<string, unknown>[])[0],
  ...patch,
});
const mpnews = (articles: unknown[]) => messageBody('mpnews', { mpnews: { articles } });

describe('mpnews message', () => {
  it('accepts the WeCom doc example', () => {
    expectValid(messageBody('mpnews'));
  });

  it('accepts 8 articles and rejects 9 or none', () => {
    expectValid(mpnews(Array.from({ length: 8 }, () => mpArticle({}))));
    expectOnlyIssue(
      mpnews(Array.from({ length: 9 }, () => mpArticle({}))),
      'mpnews.articles',
      '9 articles, max 8',
    );
    expectOnlyIssue(mpnews([]), 'mpnews.articles', '0 articles, min 1');
  });

  it.each(['title', 'thumb_media_id', 'content'])('names a missing %s', (field) => {
    expectOnlyIssue(mpnews([mpArticle({ [field]: undefined })]), `mpnews.articles[0].${field}`, 'required');
  });

  it('limits content to 666 K bytes (666 × 1024)', () => {
    expectValid(mpnews([mpArticle({ content: ascii(666 * 1024) })]));
    expectOnlyIssue(
      mpnews([mpArticle({ content: ascii(666 * 1024 + 1) })]),
      'mpnews.articles[0].content',
      '681985 bytes, max 681984',
    );
  });

  it('limits title, author and digest in bytes', () => {
    expect(
      expectIssues(
        mpnews([mpArticle({}), mpArticle({ title: chinese(43), author: chinese(22), digest: ascii(513) })]),
      ),
    ).toEqual([
      { field: 'mpnews.articles[1].title', message: '129 bytes, max 128' },
      { field: 'mpnews.articles[1].author', message: '66 bytes, max 64' },
      { field: 'mpnews.articles[1].digest', message: '513 bytes, max 512' },
    ]);
  });

  it('accepts safe 2 (share inside the corp only), which only mpnews supports', () => {
    expect(expectValid(messageBody('mpnews', { safe: 2 })).options).toEqual({ safe: 2 });
  });
});

const notice = (patch: Record<string, unknown>) =>
  messageBody('miniprogram_notice', {
    miniprogram_notice: { ...contentExamples().miniprogram_notice, ...patch },
  });

describe('miniprogram_notice message', () => {
  it('accepts the WeCom doc example', () => {
    expectValid(messageBody('miniprogram_notice'));
  });

  it.each(['appid', 'title'])('names a missing %s', (field) => {
    expectOnlyIssue(notice({ [field]: undefined }), `miniprogram_notice.${field}`, 'required');
  });

  it('limits title to 4–12 characters', () => {
    expectValid(notice({ title: '会议通知' }));
    expectOnlyIssue(notice({ title: '会议' }), 'miniprogram_notice.title', '2 characters, min 4');
    expectOnlyIssue(notice({ title: chinese(13) }), 'miniprogram_notice.title', '13 characters, max 12');
  });

  it('limits description to 4–12 characters', () => {
    expectOnlyIssue(
      notice({ description: chinese(13) }),
      'miniprogram_notice.description',
      '13 characters, max 12',
    );
  });

  it('limits page to 1024 bytes', () => {
    expectOnlyIssue(notice({ page: ascii(1025) }), 'miniprogram_notice.page', '1025 bytes, max 1024');
  });

  it('accepts 10 content items and rejects 11', () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `键${i}`, value: `值${i}` }));
    expectValid(notice({ content_item: items(10) }));
    expectOnlyIssue(
      notice({ content_item: items(11) }),
      'miniprogram_notice.content_item',
      '11 items, max 10',
    );
  });

  it('limits item keys to 10 and values to 30 characters', () => {
    expect(
      expectIssues(
        notice({
          content_item: [
            { key: 'k', value: 'v' },
            { key: chinese(11), value: chinese(31) },
          ],
        }),
      ),
    ).toEqual([
      { field: 'miniprogram_notice.content_item[1].key', message: '11 characters, max 10' },
      { field: 'miniprogram_notice.content_item[1].value', message: '31 characters, max 30' },
    ]);
  });

  it('requires emphasis_first_item to be a boolean', () => {
    expectOnlyIssue(
      notice({ emphasis_first_item: 1 }),
      'miniprogram_notice.emphasis_first_item',
      'must be true or false',
    );
  });
});
