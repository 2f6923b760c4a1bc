import { describe, expect, it } from 'vitest';
import { cardTaskId, toWecomCardUpdateBody, validateCardUpdate, withTaskId } from '#lib/messages/index.js';
import { cardBody, expectValid, messageBody } from '#test/helpers/messages-factories.js';

const ID = 'msg_01JDQ7Z3S9X4T2V5W6Y7Z8A9BC';

describe('withTaskId', () => {
  it.each(['button_interaction', 'vote_interaction', 'multiple_interaction'] as const)(
    'gives a %s card without task_id the message id',
    (cardType) => {
      const req = expectValid(cardBody(cardType, { task_id: undefined }));

      expect(cardTaskId(withTaskId(req, ID))).toBe(ID);
      expect(req.content.task_id).toBeUndefined(); // the validated request is not mutated
    },
  );

  it("keeps the client's own task_id", () => {
    const req = expectValid(cardBody('button_interaction', { task_id: 'approval-4711' }));

    expect(cardTaskId(withTaskId(req, ID))).toBe('approval-4711');
  });

  it('gives a notice card one only when it has an action_menu (only then can it call back)', () => {
    const withMenu = expectValid(cardBody('text_notice', { task_id: undefined }));
    const plain = expectValid(cardBody('text_notice', { task_id: undefined, action_menu: undefined }));

    expect(cardTaskId(withTaskId(withMenu, ID))).toBe(ID);
    expect(withTaskId(plain, ID)).toBe(plain);
  });

  it('leaves other message types alone', () => {
    const req = expectValid(messageBody('text'));

    expect(withTaskId(req, ID)).toBe(req);
    expect(cardTaskId(req)).toBeUndefined();
  });
});

describe('validateCardUpdate', () => {
  it('accepts a button update and a whole new card, with optional targets', () => {
    const a = validateCardUpdate({ button: { replace_name: '已批准 by alice' }, userids: ['alice'] });
    const b = validateCardUpdate({ template_card: cardBody('text_notice').template_card });

    expect(a).toEqual({
      ok: true,
      value: { button: { replace_name: '已批准 by alice' }, userids: ['alice'] },
    });
    expect(b.ok).toBe(true);
  });

  it('asks for exactly one of button and template_card', () => {
    const both = validateCardUpdate({
      button: { replace_name: 'x' },
      template_card: cardBody('text_notice').template_card,
    });
    const none = validateCardUpdate({ userids: ['alice'] });

    for (const r of [both, none]) {
      expect(r).toEqual({
        ok: false,
        issues: [{ field: 'button', message: 'give exactly one of button or template_card' }],
      });
    }
  });

  it('names bad fields: empty replace_name, an invalid card, unknown keys, too many users', () => {
    const r = validateCardUpdate({
      button: { replace_name: '' },
      userids: Array.from({ length: 1001 }, (_, i) => `u${i}`),
      atall: 1,
    });

    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.issues.map((i) => i.field)).toEqual(['button.replace_name', 'userids', 'atall']);
    const card = validateCardUpdate({ template_card: { card_type: 'text_notice' } });
    expect(card.ok ? [] : card.issues.map((i) => i.field)).toContain('template_card.card_action');
  });
});

describe('toWecomCardUpdateBody', () => {
  it('updates every recipient (atall) unless targets are given, with the agentid and response_code', () => {
    expect(toWecomCardUpdateBody({ button: { replace_name: 'ok' } }, 1000002, 'rc1', ID)).toEqual({
      atall: 1,
      agentid: 1000002,
      response_code: 'rc1',
      button: { replace_name: 'ok' },
    });
    expect(
      toWecomCardUpdateBody({ button: { replace_name: 'ok' }, userids: ['alice'] }, 7, 'rc2', ID),
    ).toEqual({ userids: ['alice'], agentid: 7, response_code: 'rc2', button: { replace_name: 'ok' } });
  });

  it('keeps the original task_id on a new card that names none, so later clicks still find the message', () => {
    const card = cardBody('button_interaction', { task_id: undefined }).template_card as Record<
      string,
      unknown
    >;

    const body = toWecomCardUpdateBody({ template_card: card }, 7, 'rc', ID);

    expect((body.template_card as { task_id: string }).task_id).toBe(ID);
  });
});
