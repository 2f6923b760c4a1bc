import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CARD_TYPE_NAMES,
  type CardType,
  MSG_TYPES,
  type MsgType,
  validateMessageRequest,
} from '#lib/messages/index.js';
import { type IngestGateway, queueDepth, startIngestGateway } from '#test/helpers/ingest-gateway.js';
import { ascii, cardBody, cardExamples, chinese, messageBody } from '#test/helpers/messages-factories.js';

type Json = Record<string, unknown>;

/** One WeCom limit broken per msgtype, and the field the 400 must name. */
const violations: Record<MsgType, { body: () => Json; field: string }> = {
  text: { body: () => messageBody('text', { text: { content: ascii(2049) } }), field: 'text.content' },
  image: { body: () => messageBody('image', { image: {} }), field: 'image.media_id' },
  voice: { body: () => messageBody('voice', { voice: { media_id: '' } }), field: 'voice.media_id' },
  video: {
    body: () => messageBody('video', { video: { media_id: 'M', title: ascii(129) } }),
    field: 'video.title',
  },
  file: { body: () => messageBody('file', { file: { media_id: 42 } }), field: 'file.media_id' },
  textcard: {
    body: () =>
      messageBody('textcard', {
        textcard: { title: 't', description: 'd', url: 'https://work.weixin.qq.com', btntxt: '查看更多详情' },
      }),
    field: 'textcard.btntxt',
  },
  news: {
    body: () => {
      const article = { title: 't', url: 'https://work.weixin.qq.com' };
      return messageBody('news', { news: { articles: Array.from({ length: 9 }, () => article) } });
    },
    field: 'news.articles',
  },
  mpnews: {
    body: () =>
      messageBody('mpnews', {
        mpnews: { articles: [{ title: 't', thumb_media_id: 'M', content: 'c', author: ascii(65) }] },
      }),
    field: 'mpnews.articles[0].author',
  },
  markdown: {
    // 683 Chinese characters are 2049 UTF-8 bytes: WeCom counts bytes.
    body: () => messageBody('markdown', { markdown: { content: chinese(683) } }),
    field: 'markdown.content',
  },
  miniprogram_notice: {
    body: () => {
      const body = messageBody('miniprogram_notice');
      const notice = body.miniprogram_notice as Json;
      notice.content_item = Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, value: 'v' }));
      return body;
    },
    field: 'miniprogram_notice.content_item',
  },
  template_card: {
    body: () => cardBody('text_notice', { task_id: ascii(129) }),
    field: 'template_card.task_id',
  },
};

const cardViolations: Record<CardType, { changes: Json; field: string }> = {
  text_notice: {
    changes: {
      horizontal_content_list: Array.from({ length: 7 }, (_, i) => ({ keyname: `k${i}`, value: 'v' })),
    },
    field: 'template_card.horizontal_content_list',
  },
  news_notice: { changes: { 'card_image.aspect_ratio': 3 }, field: 'template_card.card_image.aspect_ratio' },
  button_interaction: {
    changes: {
      button_list: Array.from({ length: 7 }, (_, i) => ({ text: `b${i}`, key: `k${i}` })),
    },
    field: 'template_card.button_list',
  },
  vote_interaction: {
    changes: {
      'checkbox.option_list': Array.from({ length: 21 }, (_, i) => ({ id: `o${i}`, text: `t${i}` })),
    },
    field: 'template_card.checkbox.option_list',
  },
  multiple_interaction: {
    changes: {
      select_list: Array.from({ length: 4 }, (_, i) => ({
        question_key: `q${i}`,
        option_list: [{ id: `s${i}`, text: 't' }],
      })),
    },
    field: 'template_card.select_list',
  },
};

describe('POST /v1/messages: every msgtype, recipients, priorities (sender off)', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway({ startSender: false });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it.each(MSG_TYPES)('accepts the WeCom example for msgtype %s with 202 and a msg_ id', async (msgtype) => {
    const res = await gw.post('/v1/messages', messageBody(msgtype));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(/^msg_[0-9A-Z]{26}$/), status: 'queued' });
  });

  it.each(CARD_TYPE_NAMES)('accepts template_card with card_type %s', async (cardType) => {
    const res = await gw.post('/v1/messages', cardBody(cardType));
    expect(res.status).toBe(202);
  });

  it.each(MSG_TYPES)('answers 400 naming the field when a %s limit is broken', async (msgtype) => {
    const { body, field } = violations[msgtype];
    const before = await queueDepth(gw.stack, 'normal');

    const res = await gw.post('/v1/messages', body());

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_message');
    expect(res.body.error.details).toContainEqual({ field, message: expect.any(String) });
    // The HTTP details are exactly the validator's issues (the messages are pinned in test/unit/messages).
    const expected = validateMessageRequest(body());
    expect(expected.ok ? [] : expected.issues).toEqual(res.body.error.details);
    expect(await queueDepth(gw.stack, 'normal')).toBe(before);
  });

  it.each(CARD_TYPE_NAMES)(
    'answers 400 naming the field when a %s card limit is broken',
    async (cardType) => {
      const { changes, field } = cardViolations[cardType];
      const res = await gw.post('/v1/messages', cardBody(cardType, changes));
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContainEqual({ field, message: expect.any(String) });
    },
  );

  it('reports a byte limit in the detail message (text.content: 2049 bytes, max 2048)', async () => {
    const res = await gw.post('/v1/messages', messageBody('text', { text: { content: ascii(2049) } }));
    expect(res.body.error.details).toEqual([
      {
        field: 'text.content',
        message: '2049 bytes, max 2048; send "split": true to have it delivered in parts',
      },
    ]);
  });

  describe('recipients', () => {
    it.each([
      ['a|b string', { touser: 'zhangsan|lisi' }],
      ['arrays', { touser: ['zhangsan', 'lisi'], toparty: ['1', '2'], totag: [3] }],
      ['@all', { touser: '@all' }],
      ['only a party', { touser: undefined, toparty: '2' }],
      ['1000 users', { touser: Array.from({ length: 1000 }, (_, i) => `u${i}`) }],
    ])('accepts %s', async (_name, recipients) => {
      const res = await gw.post('/v1/messages', { ...messageBody('text'), ...recipients });
      expect(res.status).toBe(202);
    });

    it.each([
      ['1001 users', { touser: Array.from({ length: 1001 }, (_, i) => `u${i}`) }, 'touser'],
      [
        '101 parties',
        { touser: undefined, toparty: Array.from({ length: 101 }, (_, i) => i + 1) },
        'toparty',
      ],
      ['101 tags', { touser: undefined, totag: Array.from({ length: 101 }, (_, i) => i + 1) }, 'totag'],
    ])('rejects %s with 400 on %s', async (_name, recipients, field) => {
      const res = await gw.post('/v1/messages', { ...messageBody('text'), ...recipients });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('rejects a message without any recipient', async () => {
      const { touser: _none, ...body } = messageBody('text');
      const res = await gw.post('/v1/messages', body);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual(
        validateMessageRequest(body).ok ? [] : (validateMessageRequest(body) as { issues: unknown[] }).issues,
      );
    });
  });

  describe('priority lanes', () => {
    it('puts priority high on the high queue and the default on the normal queue', async () => {
      const [high0, normal0] = [await queueDepth(gw.stack, 'high'), await queueDepth(gw.stack, 'normal')];

      expect((await gw.post('/v1/messages', messageBody('text', { priority: 'high' }))).status).toBe(202);
      expect((await gw.post('/v1/messages', messageBody('text'))).status).toBe(202);
      expect((await gw.post('/v1/messages', messageBody('text', { priority: 'normal' }))).status).toBe(202);

      expect(await queueDepth(gw.stack, 'high')).toBe(high0 + 1);
      expect(await queueDepth(gw.stack, 'normal')).toBe(normal0 + 2);
    });

    it('rejects an unknown priority', async () => {
      const res = await gw.post('/v1/messages', messageBody('text', { priority: 'urgent' }));
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'priority', message: 'must be one of high, normal' }]);
    });
  });

  describe('callback_url (SSRF guard; only IP literals and localhost here, so no DNS leaves the machine)', () => {
    it('accepts a loopback https target because the local stack allows loopback webhooks', async () => {
      const res = await gw.post(
        '/v1/messages',
        messageBody('text', { callback_url: 'https://127.0.0.1:8443/hook' }),
      );
      expect(res.status).toBe(202);
    });

    it.each([
      ['https://10.1.2.3/hook', 'private'],
      ['https://169.254.169.254/latest/meta-data/', 'link-local'],
      ['https://100.64.0.1/', 'carrier-grade NAT'],
      ['https://[fd12::1]/hook', 'private'],
      ['https://[::ffff:7f00:1]/hook', 'IPv4-mapped'],
      ['https://0.0.0.0/', 'unspecified'],
      ['https://224.0.0.1/', 'multicast'],
    ])('rejects %s with 400 on callback_url (%s)', async (url, what) => {
      const before = await queueDepth(gw.stack, 'normal');
      const res = await gw.post('/v1/messages', messageBody('text', { callback_url: url }));
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'callback_url', message: expect.stringContaining(what) },
      ]);
      expect(await queueDepth(gw.stack, 'normal')).toBe(before);
    });

    it('rejects a plain http target', async () => {
      const res = await gw.post(
        '/v1/messages',
        messageBody('text', { callback_url: 'http://127.0.0.1/hook' }),
      );
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('callback_url');
    });
  });

  describe('GET /v1/messages/{id}', () => {
    it('returns the SPEC §2 status shape for a queued message', async () => {
      const accepted = await gw.post(
        '/v1/messages',
        messageBody('text', { priority: 'high', metadata: { ticket: 'INC-42' } }),
      );

      const res = await gw.get(`/v1/messages/${accepted.body.id}`);

      expect(res.status).toBe(200);
      const sent = messageBody('text') as { text: unknown };
      expect(res.body).toEqual({
        id: accepted.body.id,
        app: 'ops',
        status: 'queued',
        priority: 'high',
        attempts: 0,
        // What WeCom is sent: the msgtype and its object, as accepted.
        body: { msgtype: 'text', text: sent.text },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        sent_at: null,
        // Sent at once: no schedule.
        send_at: null,
        release_at: null,
        scheduled_by: null,
        metadata: { ticket: 'INC-42' },
        wecom: null,
        error: null,
        events: [{ at: expect.any(String), type: 'queued' }],
        events_omitted: 0,
        webhook_status: null,
        wecom_events: [],
        webhook_attempts: [],
      });
    });
  });

  it('keeps the card examples valid (guards the factories this file relies on)', () => {
    for (const card of Object.values(cardExamples())) expect(card.card_type).toBeTypeOf('string');
  });
});
