import { describe, expect, it } from 'vitest';
import type { CardType } from '#lib/messages/index.js';
import {
  ascii,
  cardBody,
  expectIssues,
  expectOnlyIssue,
  expectValid,
} from '#test/helpers/messages-factories.js';

const CARD_TYPES: CardType[] = [
  'text_notice',
  'news_notice',
  'button_interaction',
  'vote_interaction',
  'multiple_interaction',
];
const list = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

describe('template_card', () => {
  it.each(CARD_TYPES)('accepts the WeCom doc example of %s unchanged', (cardType) => {
    const body = cardBody(cardType);

    expect(expectValid(body).content).toEqual(body.template_card);
  });

  it('rejects an unknown card_type with the list of valid ones', () => {
    expectOnlyIssue(
      cardBody('text_notice', { card_type: 'task_card' }),
      'template_card.card_type',
      'must be one of text_notice, news_notice, button_interaction, vote_interaction, multiple_interaction',
    );
  });

  it('names a missing card_type', () => {
    expectOnlyIssue(cardBody('text_notice', { card_type: undefined }), 'template_card.card_type', 'required');
  });

  it('rejects fields of another card type (strict per card_type)', () => {
    expectOnlyIssue(
      cardBody('vote_interaction', { button_list: [{ text: 'a', key: 'k' }] }),
      'template_card.button_list',
      'unknown field',
    );
  });

  describe('common parts', () => {
    it('limits task_id to 128 bytes of letters, digits and _-@', () => {
      expectValid(cardBody('button_interaction', { task_id: `t_-@${ascii(124)}` }));
      expectOnlyIssue(
        cardBody('button_interaction', { task_id: ascii(129) }),
        'template_card.task_id',
        '129 bytes, max 128',
      );
      expectOnlyIssue(
        cardBody('button_interaction', { task_id: 'task id' }),
        'template_card.task_id',
        'may only contain letters, digits, _, - and @',
      );
    });

    it('limits source.desc_color to 0–3', () => {
      expectOnlyIssue(
        cardBody('text_notice', { 'source.desc_color': 4 }),
        'template_card.source.desc_color',
        'must be one of 0, 1, 2, 3',
      );
    });

    it('requires 1–3 unique actions in action_menu, keys ≤1024 bytes', () => {
      const withActions = (actions: unknown[]) =>
        cardBody('text_notice', { 'action_menu.action_list': actions });
      expectOnlyIssue(withActions([]), 'template_card.action_menu.action_list', '0 actions, min 1');
      expectOnlyIssue(
        withActions(list(4, (i) => ({ text: `t${i}`, key: `k${i}` }))),
        'template_card.action_menu.action_list',
        '4 actions, max 3',
      );
      expectOnlyIssue(
        withActions([{ text: 'a', key: ascii(1025) }]),
        'template_card.action_menu.action_list[0].key',
        '1025 bytes, max 1024',
      );
      expectOnlyIssue(
        withActions([
          { text: 'a', key: 'A' },
          { text: 'b', key: 'A' },
        ]),
        'template_card.action_menu.action_list[1].key',
        'same as action_list[0].key; must be unique',
      );
    });

    it('accepts a card with action_menu but no task_id: the gateway assigns one (withTaskId)', () => {
      expectValid(cardBody('text_notice', { task_id: undefined }));
    });

    it('allows at most 6 horizontal_content_list items and requires each keyname', () => {
      expectOnlyIssue(
        cardBody('text_notice', { horizontal_content_list: list(7, (i) => ({ keyname: `k${i}` })) }),
        'template_card.horizontal_content_list',
        '7 items, max 6',
      );
      expectOnlyIssue(
        cardBody('text_notice', { horizontal_content_list: [{ value: 'v' }] }),
        'template_card.horizontal_content_list[0].keyname',
        'required',
      );
    });

    it('requires url, media_id or userid by horizontal_content_list type', () => {
      const issues = expectIssues(
        cardBody('text_notice', {
          horizontal_content_list: [
            { type: 1, keyname: 'a' },
            { type: 2, keyname: 'b' },
            { type: 3, keyname: 'c' },
            { type: 4, keyname: 'd' },
          ],
        }),
      );
      expect(issues).toEqual([
        { field: 'template_card.horizontal_content_list[0].url', message: 'required when type is 1' },
        { field: 'template_card.horizontal_content_list[1].media_id', message: 'required when type is 2' },
        { field: 'template_card.horizontal_content_list[2].userid', message: 'required when type is 3' },
        { field: 'template_card.horizontal_content_list[3].type', message: 'must be one of 0, 1, 2, 3' },
      ]);
    });

    it('allows at most 3 jump_list items and requires url/appid by type', () => {
      expectOnlyIssue(
        cardBody('text_notice', { jump_list: list(4, (i) => ({ title: `j${i}` })) }),
        'template_card.jump_list',
        '4 items, max 3',
      );
      expectOnlyIssue(
        cardBody('text_notice', { jump_list: [{ type: 2, title: 'mini' }] }),
        'template_card.jump_list[0].appid',
        'required when type is 2',
      );
    });

    it('requires quote_area.url when its type is 1', () => {
      expectOnlyIssue(
        cardBody('text_notice', { 'quote_area.url': undefined }),
        'template_card.quote_area.url',
        'required when type is 1',
      );
    });
  });

  describe('text_notice', () => {
    it('requires card_action, of type 1 or 2', () => {
      expectOnlyIssue(
        cardBody('text_notice', { card_action: undefined }),
        'template_card.card_action',
        'required',
      );
      expectOnlyIssue(
        cardBody('text_notice', { card_action: { type: 0 } }),
        'template_card.card_action.type',
        'must be one of 1, 2',
      );
      expectOnlyIssue(
        cardBody('text_notice', { card_action: { type: 1 } }),
        'template_card.card_action.url',
        'required when type is 1',
      );
    });

    it('requires main_title.title or sub_title_text', () => {
      expectValid(cardBody('text_notice', { main_title: undefined }));
      expectOnlyIssue(
        cardBody('text_notice', { main_title: undefined, sub_title_text: undefined }),
        'template_card.main_title.title',
        'required unless sub_title_text is set',
      );
    });
  });

  describe('news_notice', () => {
    it('requires main_title.title', () => {
      expectOnlyIssue(
        cardBody('news_notice', { main_title: undefined }),
        'template_card.main_title',
        'required',
      );
      expectOnlyIssue(
        cardBody('news_notice', { main_title: { desc: 'd' } }),
        'template_card.main_title.title',
        'required',
      );
    });

    it('requires card_image or image_text_area', () => {
      expectValid(cardBody('news_notice', { card_image: undefined }));
      expectValid(cardBody('news_notice', { image_text_area: undefined }));
      expectOnlyIssue(
        cardBody('news_notice', { card_image: undefined, image_text_area: undefined }),
        'template_card.card_image',
        'card_image or image_text_area is required',
      );
    });

    it('keeps card_image.aspect_ratio within 1.3–2.25', () => {
      expectOnlyIssue(
        cardBody('news_notice', { 'card_image.aspect_ratio': 2.5 }),
        'template_card.card_image.aspect_ratio',
        '2.5, max 2.25',
      );
      expectOnlyIssue(
        cardBody('news_notice', { 'card_image.aspect_ratio': 1.2 }),
        'template_card.card_image.aspect_ratio',
        '1.2, min 1.3',
      );
    });

    it('requires image_text_area.image_url', () => {
      expectOnlyIssue(
        cardBody('news_notice', { 'image_text_area.image_url': undefined }),
        'template_card.image_text_area.image_url',
        'required',
      );
    });

    it('allows at most 4 vertical_content_list items, each with a title', () => {
      expectOnlyIssue(
        cardBody('news_notice', { vertical_content_list: list(5, (i) => ({ title: `v${i}` })) }),
        'template_card.vertical_content_list',
        '5 items, max 4',
      );
      expectOnlyIssue(
        cardBody('news_notice', { vertical_content_list: [{ desc: 'd' }] }),
        'template_card.vertical_content_list[0].title',
        'required',
      );
    });

    it('requires card_action', () => {
      expectOnlyIssue(
        cardBody('news_notice', { card_action: undefined }),
        'template_card.card_action',
        'required',
      );
    });
  });

  describe('button_interaction', () => {
    const buttons = (n: number) => list(n, (i) => ({ text: `b${i}`, key: `key_${i}` }));

    it('requires button_list (task_id is assigned by the gateway when missing)', () => {
      expect(
        expectIssues(cardBody('button_interaction', { task_id: undefined, button_list: undefined })),
      ).toEqual([{ field: 'template_card.button_list', message: 'required' }]);
    });

    it('accepts 6 buttons and rejects 7 or none', () => {
      expectValid(cardBody('button_interaction', { button_list: buttons(6) }));
      expectOnlyIssue(
        cardBody('button_interaction', { button_list: buttons(7) }),
        'template_card.button_list',
        '7 buttons, max 6',
      );
      expectOnlyIssue(
        cardBody('button_interaction', { button_list: [] }),
        'template_card.button_list',
        '0 buttons, min 1',
      );
    });

    it('requires a key on callback buttons and a url on link buttons', () => {
      expect(
        expectIssues(
          cardBody('button_interaction', { button_list: [{ text: 'a' }, { type: 1, text: 'b' }] }),
        ),
      ).toEqual([
        { field: 'template_card.button_list[0].key', message: 'required when type is 0' },
        { field: 'template_card.button_list[1].url', message: 'required when type is 1' },
      ]);
    });

    it('rejects duplicate button keys, naming the later one', () => {
      expectOnlyIssue(
        cardBody('button_interaction', {
          button_list: [
            { text: 'a', key: 'k0' },
            { text: 'b', key: 'k1' },
            { text: 'c', key: 'k0' },
          ],
        }),
        'template_card.button_list[2].key',
        'same as button_list[0].key; must be unique',
      );
    });

    it('limits button keys to 1024 bytes', () => {
      expectOnlyIssue(
        cardBody('button_interaction', { button_list: [{ text: 'a', key: ascii(1025) }] }),
        'template_card.button_list[0].key',
        '1025 bytes, max 1024',
      );
    });

    it('limits button_selection to 10 unique options with ids ≤128 bytes', () => {
      const withOptions = (options: unknown[]) =>
        cardBody('button_interaction', { 'button_selection.option_list': options });
      expectOnlyIssue(
        withOptions(list(11, (i) => ({ id: `o${i}`, text: `t${i}` }))),
        'template_card.button_selection.option_list',
        '11 options, max 10',
      );
      expectOnlyIssue(
        withOptions([{ id: ascii(129), text: 't' }]),
        'template_card.button_selection.option_list[0].id',
        '129 bytes, max 128',
      );
      expectOnlyIssue(
        withOptions([
          { id: 'same', text: 'a' },
          { id: 'same', text: 'b' },
        ]),
        'template_card.button_selection.option_list[1].id',
        'same as option_list[0].id; must be unique',
      );
    });

    it('accepts card_action type 0 (not a link)', () => {
      expectValid(cardBody('button_interaction', { card_action: { type: 0 } }));
    });
  });

  describe('vote_interaction', () => {
    const options = (n: number) => list(n, (i) => ({ id: `option_${i}`, text: `选项${i}` }));
    const withOptions = (opts: unknown[]) => cardBody('vote_interaction', { 'checkbox.option_list': opts });

    it('requires checkbox and submit_button (not task_id)', () => {
      expect(
        expectIssues(
          cardBody('vote_interaction', { task_id: undefined, checkbox: undefined, submit_button: undefined }),
        ),
      ).toEqual([
        { field: 'template_card.checkbox', message: 'required' },
        { field: 'template_card.submit_button', message: 'required' },
      ]);
    });

    it('accepts 20 options and rejects 21 or none', () => {
      expectValid(withOptions(options(20)));
      expectOnlyIssue(withOptions(options(21)), 'template_card.checkbox.option_list', '21 options, max 20');
      expectOnlyIssue(withOptions([]), 'template_card.checkbox.option_list', '0 options, min 1');
    });

    it('rejects duplicate option ids', () => {
      expectOnlyIssue(
        withOptions([...options(2), { id: 'option_1', text: 'again' }]),
        'template_card.checkbox.option_list[2].id',
        'same as option_list[1].id; must be unique',
      );
    });

    it('limits checkbox.mode to 0 or 1 and question_key to 1024 bytes', () => {
      expectOnlyIssue(
        cardBody('vote_interaction', { 'checkbox.mode': 2 }),
        'template_card.checkbox.mode',
        'must be one of 0, 1',
      );
      expectOnlyIssue(
        cardBody('vote_interaction', { 'checkbox.question_key': ascii(1025) }),
        'template_card.checkbox.question_key',
        '1025 bytes, max 1024',
      );
    });

    it('requires submit_button.key', () => {
      expectOnlyIssue(
        cardBody('vote_interaction', { submit_button: { text: '提交' } }),
        'template_card.submit_button.key',
        'required',
      );
    });
  });

  describe('multiple_interaction', () => {
    const select = (key: string, n = 2) => ({
      question_key: key,
      option_list: list(n, (i) => ({ id: `${key}_${i}`, text: `选项${i}` })),
    });

    it('requires select_list and submit_button (not task_id)', () => {
      expect(
        expectIssues(
          cardBody('multiple_interaction', {
            task_id: undefined,
            select_list: undefined,
            submit_button: undefined,
          }),
        ),
      ).toEqual([
        { field: 'template_card.select_list', message: 'required' },
        { field: 'template_card.submit_button', message: 'required' },
      ]);
    });

    it('accepts 3 selects and rejects 4 or none', () => {
      expectValid(cardBody('multiple_interaction', { select_list: [select('a'), select('b'), select('c')] }));
      expectOnlyIssue(
        cardBody('multiple_interaction', {
          select_list: [select('a'), select('b'), select('c'), select('d')],
        }),
        'template_card.select_list',
        '4 selects, max 3',
      );
      expectOnlyIssue(
        cardBody('multiple_interaction', { select_list: [] }),
        'template_card.select_list',
        '0 selects, min 1',
      );
    });

    it('limits each select to 10 options', () => {
      expectOnlyIssue(
        cardBody('multiple_interaction', { select_list: [select('a'), select('b', 11)] }),
        'template_card.select_list[1].option_list',
        '11 options, max 10',
      );
    });

    it('rejects duplicate question keys', () => {
      expectOnlyIssue(
        cardBody('multiple_interaction', { select_list: [select('a'), select('a', 1)] }),
        'template_card.select_list[1].question_key',
        'same as select_list[0].question_key; must be unique',
      );
    });
  });
});
