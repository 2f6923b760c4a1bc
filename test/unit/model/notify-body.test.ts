import { describe, expect, it } from 'vitest';
import type { CallbackEvent } from '#lib/callback/index.js';
import {
  applyChange,
  changes,
  decodeNotifyJob,
  encodeNotifyJob,
  eventNotice,
  newRecord,
  statusNotice,
  taskKeyOf,
} from '#lib/model/index.js';
import { cardBody, expectValid } from '#test/helpers/messages-factories.js';

const AT = '2026-12-01T08:00:00.000Z';
const origin = () => ({
  id: 'msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC',
  app: 'ops',
  priority: 'normal' as const,
  request: expectValid(cardBody('button_interaction')),
  apiKey: 'ci',
  createdAt: AT,
  expiresAt: 1_800_000_000,
});

const click: CallbackEvent = {
  kind: 'template_card_event',
  corpId: 'ww1',
  from: 'alice',
  createTime: 1_790_000_000,
  eventKey: 'approve',
  taskId: 'task_id',
  cardType: 'button_interaction',
  responseCode: 'secret-rc',
  selectedItems: [],
};

describe('statusNotice', () => {
  it('is made for sent, failed, dead and recalled, with the time the status was reached', () => {
    const sent = applyChange(newRecord(origin()), changes.send(AT, { msgid: 'M' }));

    expect(sent && statusNotice(sent, 'send')).toEqual({
      v: 1,
      kind: 'status',
      messageId: origin().id,
      app: 'ops',
      status: 'sent',
      at: AT,
    });
  });

  it('is not made for a withdrawn record (the client was answered 503) nor for a pending status', () => {
    const record = newRecord(origin());
    const withdrawn = applyChange(record, changes.withdraw(AT, 'enqueue_failed'));

    expect(withdrawn && statusNotice(withdrawn, 'withdraw')).toBeUndefined();
    expect(statusNotice(record, 'retry')).toBeUndefined();
  });
});

describe('notify job bodies', () => {
  it('round-trip, and an event job leaves the response_code behind', () => {
    const job = eventNotice({ messageId: 'm', app: 'ops', eventId: 'evt:x', receivedAt: AT, event: click });

    expect(JSON.stringify(job)).not.toContain('secret-rc');
    expect(decodeNotifyJob(encodeNotifyJob(job))).toEqual(job);
  });

  it.each([
    ['not JSON', '{'],
    ['another version', '{"v":2,"kind":"status","messageId":"m","app":"ops","status":"sent","at":"x"}'],
    ['an unknown status', '{"v":1,"kind":"status","messageId":"m","app":"ops","status":"queued","at":"x"}'],
    ['an unknown kind', '{"v":1,"kind":"other","messageId":"m","app":"ops"}'],
    ['an event job without its event', '{"v":1,"kind":"event","messageId":"m","app":"ops","eventId":"e"}'],
  ])('decode to undefined for %s', (_, body) => {
    expect(decodeNotifyJob(body)).toBeUndefined();
  });
});

describe('newRecord', () => {
  it("keys a template card by app and task_id, so a card callback's TaskId finds the message", () => {
    expect(newRecord(origin()).taskKey).toBe(taskKeyOf('ops', 'task_id'));
    expect(taskKeyOf('ops', 'task_id')).toBe('ops#task_id');
  });
});
