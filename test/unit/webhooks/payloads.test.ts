import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { dedupeKey, parseCallbackMessage } from '#lib/callback/index.js';
import {
  generateWebhookSecret,
  type MessageSnapshot,
  messageStatusPayload,
  signWebhook,
  WEBHOOK_EVENT_TYPES,
  webhookIdFor,
  wecomEventPayload,
} from '#lib/webhooks/index.js';
import { raw, wecomXml } from '#test/helpers/wecom-callback.js';

const SENT: MessageSnapshot = {
  id: 'msg_01JFQ4S7Y3M2K8V6T5R4P3N2B1',
  app: 'ops',
  status: 'sent',
  priority: 'normal',
  attempts: 1,
  createdAt: '2026-12-01T08:00:00.000Z',
  updatedAt: '2026-12-01T08:00:01.250Z',
  sentAt: '2026-12-01T08:00:01.250Z',
  metadata: { ticket: 'T-1' },
  wecom: { msgid: 'vcT8gGc-7dFb', invaliduser: 'bob' },
};

const CARD_CLICK = parseCallbackMessage(
  wecomXml({
    ToUserName: 'ww1a2b3c4d5e6f7a8b',
    FromUserName: 'alice',
    CreateTime: 1_790_000_000,
    MsgType: 'event',
    Event: 'template_card_event',
    EventKey: 'approve',
    TaskId: 'wg_task_1',
    CardType: 'vote_interaction',
    ResponseCode: 'SECRET-ONE-USE-CODE',
    AgentID: 1000002,
    SelectedItems: raw(
      '<SelectedItem><QuestionKey>q</QuestionKey><OptionIds><OptionId>a</OptionId></OptionIds></SelectedItem>',
    ),
  }),
);

describe('messageStatusPayload', () => {
  it('describes a sent message in the API’s snake_case, timestamped when the status was reached', () => {
    expect(messageStatusPayload(SENT)).toEqual({
      type: 'message.sent',
      timestamp: '2026-12-01T08:00:01.250Z',
      data: {
        id: SENT.id,
        app: 'ops',
        status: 'sent',
        priority: 'normal',
        attempts: 1,
        created_at: '2026-12-01T08:00:00.000Z',
        updated_at: '2026-12-01T08:00:01.250Z',
        sent_at: '2026-12-01T08:00:01.250Z',
        metadata: { ticket: 'T-1' },
        wecom: { msgid: 'vcT8gGc-7dFb', invaliduser: 'bob' },
      },
    });
  });

  it('names each terminal status’s type, and carries the error of a failed one', () => {
    for (const status of ['sent', 'failed', 'dead', 'expired', 'recalled'] as const) {
      const { type } = messageStatusPayload({ ...SENT, status });
      expect(type).toBe(`message.${status}`);
      expect(WEBHOOK_EVENT_TYPES).toContain(type);
    }
    const failed = messageStatusPayload({
      id: 'msg_2',
      app: 'ops',
      status: 'failed',
      createdAt: SENT.createdAt,
      updatedAt: SENT.updatedAt,
      error: { code: 'wecom_rejected', message: 'invalid userid', wecomErrcode: 40003 },
    });
    expect(failed.data).toEqual({
      id: 'msg_2',
      app: 'ops',
      status: 'failed',
      created_at: SENT.createdAt,
      updated_at: SENT.updatedAt,
      error: { code: 'wecom_rejected', message: 'invalid userid', wecom_errcode: 40003 },
    });
  });
});

describe('wecomEventPayload', () => {
  it('carries a card click for its message, without the one-use response_code or the corp id', () => {
    const payload = wecomEventPayload({
      app: 'ops',
      event: CARD_CLICK,
      messageId: SENT.id,
      metadata: { ticket: 'T-1' },
      receivedAt: '2026-12-01T08:00:03.000Z',
    });
    expect(payload).toEqual({
      type: 'wecom.event',
      timestamp: new Date(1_790_000_000 * 1000).toISOString(),
      data: {
        app: 'ops',
        message_id: SENT.id,
        metadata: { ticket: 'T-1' },
        received_at: '2026-12-01T08:00:03.000Z',
        event: {
          kind: 'template_card_event',
          from: 'alice',
          create_time: 1_790_000_000,
          agent_id: '1000002',
          event_key: 'approve',
          task_id: 'wg_task_1',
          card_type: 'vote_interaction',
          selected_items: [{ question_key: 'q', option_ids: ['a'] }],
        },
      },
    });
    expect(JSON.stringify(payload)).not.toContain('SECRET-ONE-USE-CODE');
  });

  it('says message_id null for an event tied to no message, and keeps a contact change’s fields as sent', () => {
    const change = parseCallbackMessage(
      wecomXml({
        FromUserName: 'sys',
        CreateTime: 1,
        MsgType: 'event',
        Event: 'change_contact',
        ChangeType: 'delete_user',
        UserID: 'u1',
      }),
    );
    const { data } = wecomEventPayload({ app: 'ops', event: change, receivedAt: 'r' });
    expect(data.message_id).toBeNull();
    expect(data.event).toMatchObject({
      kind: 'change_contact',
      change_type: 'delete_user',
      fields: { UserID: 'u1' },
    });
  });
});

describe('webhookIdFor', () => {
  it('gives the same event the same id, other events other ids, all valid webhook-ids', () => {
    const ids = [
      webhookIdFor(SENT.id, 'message.sent'),
      webhookIdFor(SENT.id, 'message.recalled'),
      webhookIdFor('msg_other', 'message.sent'),
      webhookIdFor('ops', dedupeKey(CARD_CLICK)),
    ];
    expect(new Set(ids).size).toBe(4);
    expect(webhookIdFor(SENT.id, 'message.sent')).toBe(ids[0]);
    for (const id of ids) expect(id).toMatch(/^wh_[A-Za-z0-9_-]{26}$/);
  });
});

describe('a whole webhook', () => {
  it('round-trips: payload → body → signed headers → standardwebhooks verifies and returns the payload', () => {
    const secret = generateWebhookSecret();
    const payload = wecomEventPayload({
      app: 'ops',
      event: CARD_CLICK,
      messageId: SENT.id,
      receivedAt: 'now',
    });
    const body = JSON.stringify(payload);
    const headers = signWebhook(
      { id: webhookIdFor('ops', dedupeKey(CARD_CLICK)), timestamp: Math.floor(Date.now() / 1000), body },
      [secret],
    );
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(payload);
  });
});
