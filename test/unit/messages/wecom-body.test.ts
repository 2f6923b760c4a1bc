import { describe, expect, it } from 'vitest';
import { countRecipients, MSG_TYPES, toWecomSendBody } from '#lib/messages/index.js';
import { expectValid, messageBody } from '#test/helpers/messages-factories.js';

const AGENT_ID = 1000002;

describe('toWecomSendBody', () => {
  it('joins recipients with | and adds agentid and the msgtype object', () => {
    const req = expectValid(
      messageBody('text', { touser: ['zhangsan', 'lisi'], toparty: [1, 2], totag: '3' }),
    );

    expect(toWecomSendBody(req, AGENT_ID)).toEqual({
      touser: 'zhangsan|lisi',
      toparty: '1|2',
      totag: '3',
      msgtype: 'text',
      agentid: AGENT_ID,
      text: messageBody('text').text,
    });
  });

  it('leaves out empty recipient fields', () => {
    const body = toWecomSendBody(
      expectValid(messageBody('text', { touser: undefined, totag: ['7'] })),
      AGENT_ID,
    );

    expect(body).not.toHaveProperty('touser');
    expect(body).not.toHaveProperty('toparty');
    expect(body.totag).toBe('7');
  });

  it('keeps the gateway fields out of the WeCom body', () => {
    const req = expectValid(
      messageBody('text', {
        priority: 'high',
        callback_url: 'https://hooks.example.com/',
        metadata: { a: 'b' },
      }),
    );

    expect(Object.keys(toWecomSendBody(req, AGENT_ID))).toEqual(['touser', 'msgtype', 'agentid', 'text']);
  });

  it.each(MSG_TYPES)('sends exactly one %s object, as validated', (msgtype) => {
    const req = expectValid(messageBody(msgtype));
    const body = toWecomSendBody(req, AGENT_ID);

    expect(body[msgtype]).toEqual(messageBody(msgtype)[msgtype]);
    expect(Object.keys(body).filter((key) => (MSG_TYPES as readonly string[]).includes(key))).toEqual([
      msgtype,
    ]);
  });

  it('passes safe and enable_id_trans through', () => {
    const req = expectValid(messageBody('mpnews', { safe: 2, enable_id_trans: 1 }));

    expect(toWecomSendBody(req, AGENT_ID)).toMatchObject({ safe: 2, enable_id_trans: 1 });
  });

  it('passes an explicit 0 through', () => {
    const body = toWecomSendBody(expectValid(messageBody('text', { safe: 0, enable_id_trans: 0 })), AGENT_ID);

    expect(body).toMatchObject({ safe: 0, enable_id_trans: 0 });
  });

  it('does not turn on the duplicate check unless asked', () => {
    const body = toWecomSendBody(
      expectValid(messageBody('text', { duplicate_check_interval: 600 })),
      AGENT_ID,
    );

    expect(body).not.toHaveProperty('enable_duplicate_check');
    expect(body).not.toHaveProperty('duplicate_check_interval');
  });

  it('does not send enable_duplicate_check 0', () => {
    const body = toWecomSendBody(expectValid(messageBody('text', { enable_duplicate_check: 0 })), AGENT_ID);

    expect(body).not.toHaveProperty('enable_duplicate_check');
  });

  it('turns on the duplicate check when the client asked, with its interval', () => {
    const req = expectValid(
      messageBody('text', { enable_duplicate_check: 1, duplicate_check_interval: 600 }),
    );

    expect(toWecomSendBody(req, AGENT_ID)).toMatchObject({
      enable_duplicate_check: 1,
      duplicate_check_interval: 600,
    });
  });

  it('turns on the duplicate check when forced for a redelivery, looking back as far as WeCom allows', () => {
    const body = toWecomSendBody(expectValid(messageBody('text')), AGENT_ID, { forceDuplicateCheck: true });

    expect(body.enable_duplicate_check).toBe(1);
    expect(body.duplicate_check_interval).toBe(14_400);
  });

  it('keeps the client’s own duplicate check and interval when a redelivery forces the check', () => {
    const own = expectValid(
      messageBody('text', { enable_duplicate_check: 1, duplicate_check_interval: 600 }),
    );
    const bare = expectValid(messageBody('text', { enable_duplicate_check: 1 }));

    expect(toWecomSendBody(own, AGENT_ID, { forceDuplicateCheck: true })).toMatchObject({
      enable_duplicate_check: 1,
      duplicate_check_interval: 600,
    });
    expect(toWecomSendBody(bare, AGENT_ID, { forceDuplicateCheck: true })).not.toHaveProperty(
      'duplicate_check_interval',
    );
  });

  it('flags every attempt with the interval fixed at acceptance, whatever else the attempt knows', () => {
    const req = expectValid(messageBody('text'));

    const first = toWecomSendBody(req, AGENT_ID, { duplicateCheckSeconds: 3600 });
    const resend = toWecomSendBody(req, AGENT_ID, { duplicateCheckSeconds: 3600, forceDuplicateCheck: true });

    expect(first).toMatchObject({ enable_duplicate_check: 1, duplicate_check_interval: 3600 });
    expect(JSON.stringify(resend)).toBe(JSON.stringify(first));
  });

  it('sends no check at all for a message that opted out (interval 0), even when a resend would force it', () => {
    const req = expectValid(messageBody('text', { duplicate_protection: false }));

    const body = toWecomSendBody(req, AGENT_ID, { duplicateCheckSeconds: 0, forceDuplicateCheck: true });

    expect(body).not.toHaveProperty('enable_duplicate_check');
    expect(body).not.toHaveProperty('duplicate_check_interval');
  });

  it('builds byte-identical JSON for the same request', () => {
    const req = expectValid(messageBody('template_card', { toparty: '2|1', safe: 1 }));

    expect(JSON.stringify(toWecomSendBody(req, AGENT_ID))).toBe(
      JSON.stringify(toWecomSendBody(req, AGENT_ID)),
    );
  });
});

describe('countRecipients', () => {
  it('adds users, parties and tags', () => {
    const req = expectValid(messageBody('text', { touser: 'a|b|c', toparty: '1|2', totag: '9' }));

    expect(countRecipients(req)).toBe(6);
  });

  it('counts duplicates once', () => {
    expect(countRecipients(expectValid(messageBody('text', { touser: 'a|a|b' })))).toBe(2);
  });

  it('counts @all as 1', () => {
    expect(countRecipients(expectValid(messageBody('text', { touser: '@all' })))).toBe(1);
  });
});
