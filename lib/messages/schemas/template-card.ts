import * as v from 'valibot';
import {
  discriminatorMessage,
  EMPTY,
  maxBytes,
  maxItems,
  minItems,
  oneOf,
  optionalString,
  pathOf,
  requiredString,
} from '../issues.js';
import { CARD_TYPE_NAMES, LIMITS } from '../limits.js';

/**
 * template_card, one schema per card_type, from 发送应用消息 › 模板卡片消息
 * (https://developer.work.weixin.qq.com/document/path/90236#模板卡片消息).
 *
 * Enforced: required fields, list lengths, byte limits on callback keys/ids/task_id, the enums,
 * "required when type is N" rules and the "不可重复" (must be unique) rules.
 * Not enforced: display lengths that WeCom only recommends ("建议不超过N个字", e.g. main_title.title
 * 36 characters in the app-message doc, 26 in the group-robot doc); WeCom accepts longer text and the
 * client truncates it on screen, so rejecting it would break payloads that work today.
 * Uncertain (lenient on purpose): whether action_menu is accepted on the interaction cards, and
 * whether main_title is mandatory on vote_interaction/multiple_interaction — both optional here.
 */

const T = LIMITS.templateCard;

/** Callback keys: "最长支持1024字节". */
const key = () => requiredString(T.maxKeyBytes);
/** Option ids: "最长支持128字节,不可重复". */
const optionId = () => requiredString(T.maxOptionIdBytes);

/**
 * task_id: "同一个应用任务id不能重复,只能由数字、字母和“_-@”组成,最长128字节". WeCom requires it on the
 * interaction cards and on cards with action_menu ("填了action_menu字段的话本字段必填"); the gateway gives such a
 * card its message id when the client sets none (lib/messages `withTaskId`), so it is optional here.
 */
const TaskIdSchema = v.pipe(
  v.string(),
  v.nonEmpty(EMPTY),
  maxBytes(T.maxTaskIdBytes),
  v.regex(/^[A-Za-z0-9_\-@]*$/, 'may only contain letters, digits, _, - and @'),
);

/** Adds `required when type is N` issues; `type` defaults to `defaultType` when absent, as in WeCom. */
const requiredForType = <TItem extends { type?: number }>(
  rules: Record<number, readonly (keyof TItem & string)[]>,
  defaultType = 0,
) =>
  v.rawCheck<TItem>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const item = dataset.value;
    const type = item.type ?? defaultType;
    for (const field of rules[type] ?? []) {
      const value = item[field];
      if (value === undefined || value === '') {
        addIssue({ message: `required when type is ${type}`, path: pathOf(item, field) });
      }
    }
  });

/** Where a card part links to: type 1 opens `url`, type 2 a mini program (`appid`, optional `pagepath`). */
const linkEntries = {
  url: v.optional(v.string()),
  appid: v.optional(v.string()),
  pagepath: v.optional(v.string()),
};

/** A card part that may link (type 0 none, 1 url, 2 mini program) with its own fields; the link target is checked. */
const optionalLink = <TEntries extends v.ObjectEntries>(entries: TEntries) =>
  v.pipe(
    v.strictObject({ type: v.optional(oneOf([0, 1, 2])), ...linkEntries, ...entries }),
    requiredForType({ 1: ['url'], 2: ['appid'] }),
  );

/** "不可重复": reports the second and later uses of a key/id within one list. */
const uniqueBy = <TItem extends object>(field: keyof TItem & string, listName: string) =>
  v.rawCheck<TItem[]>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Map<unknown, number>();
    dataset.value.forEach((item, index) => {
      const value = item[field as keyof TItem];
      if (typeof value !== 'string') return;
      const first = seen.get(value);
      if (first === undefined) seen.set(value, index);
      else {
        addIssue({
          message: `same as ${listName}[${first}].${field}; must be unique`,
          path: pathOf(dataset.value, index, field),
        });
      }
    });
  });

/** source.desc_color: "0(默认) 灰色,1 黑色,2 红色,3 绿色". */
const SourceSchema = v.strictObject({
  icon_url: v.optional(v.string()),
  desc: v.optional(v.string()),
  desc_color: v.optional(oneOf([0, 1, 2, 3])),
});

/** action_menu.action_list: "列表长度取值范围为 [1, 3]"; key "最长支持1024字节,不可重复". */
const ActionMenuSchema = v.strictObject({
  desc: v.optional(v.string()),
  action_list: v.pipe(
    v.array(v.strictObject({ text: requiredString(), key: key() })),
    minItems(1, 'actions'),
    maxItems(T.maxActions, 'actions'),
    uniqueBy('key', 'action_list'),
  ),
});

const MainTitleSchema = v.strictObject({
  title: v.optional(v.string()),
  desc: v.optional(v.string()),
});

const MainTitleWithTitleSchema = v.strictObject({
  title: requiredString(),
  desc: v.optional(v.string()),
});

/** quote_area.type: 0 none, 1 url (url required), 2 mini program (appid required). */
const QuoteAreaSchema = optionalLink({ title: v.optional(v.string()), quote_text: v.optional(v.string()) });

const EmphasisContentSchema = v.strictObject({
  title: v.optional(v.string()),
  desc: v.optional(v.string()),
});

/** horizontal_content_list.type: 0 text, 1 url, 2 attachment (media_id), 3 member (userid). ≤6 items. */
const HorizontalContentListSchema = v.pipe(
  v.array(
    v.pipe(
      v.strictObject({
        type: v.optional(oneOf([0, 1, 2, 3])),
        keyname: requiredString(),
        value: v.optional(v.string()),
        url: v.optional(v.string()),
        media_id: v.optional(v.string()),
        userid: v.optional(v.string()),
      }),
      requiredForType({ 1: ['url'], 2: ['media_id'], 3: ['userid'] }),
    ),
  ),
  maxItems(T.maxHorizontalContent, 'items'),
);

/** jump_list.type: 0 plain, 1 url, 2 mini program. ≤3 items. */
const JumpListSchema = v.pipe(
  v.array(optionalLink({ title: requiredString() })),
  maxItems(T.maxJumps, 'items'),
);

/** Notice cards must be clickable: card_action is required and its type is 1 (url) or 2 (mini program). */
const NoticeCardActionSchema = v.pipe(
  v.strictObject({ type: oneOf([1, 2]), ...linkEntries }),
  requiredForType({ 1: ['url'], 2: ['appid'] }),
);

/** Interaction cards: card_action is optional and type 0 means "not a link". */
const InteractionCardActionSchema = optionalLink({});

/** image_text_area.type: 0 none, 1 url, 2 mini program; image_url is required. */
const ImageTextAreaSchema = optionalLink({
  title: v.optional(v.string()),
  desc: v.optional(v.string()),
  image_url: requiredString(),
});

/** card_image.aspect_ratio: "宽高比要小于2.25,大于1.3,不填该参数默认1.3". */
const CardImageSchema = v.strictObject({
  url: requiredString(),
  aspect_ratio: v.optional(
    v.pipe(
      v.number(),
      v.minValue(T.minAspectRatio, (issue) => `${issue.received}, min ${T.minAspectRatio}`),
      v.maxValue(T.maxAspectRatio, (issue) => `${issue.received}, max ${T.maxAspectRatio}`),
    ),
  ),
});

const VerticalContentListSchema = v.pipe(
  v.array(v.strictObject({ title: requiredString(), desc: v.optional(v.string()) })),
  maxItems(T.maxVerticalContent, 'items'),
);

/** Dropdown options: "下拉选项不超过 10 个,最少1个"; ids unique. */
const SelectOptionListSchema = (listName: string) =>
  v.pipe(
    v.array(v.strictObject({ id: optionId(), text: requiredString() })),
    minItems(1, 'options'),
    maxItems(T.maxSelectOptions, 'options'),
    uniqueBy('id', listName),
  );

const ButtonSelectionSchema = v.strictObject({
  question_key: key(),
  title: v.optional(v.string()),
  option_list: SelectOptionListSchema('option_list'),
  selected_id: v.optional(v.string()),
});

/**
 * button_list: "列表长度不超过6"; type 0 (default) calls back with `key` (required, unique),
 * type 1 opens `url`. style "目前可填1~4,不填或错填默认1" — WeCom tolerates other values, so only
 * the integer type is checked.
 */
const ButtonListSchema = v.pipe(
  v.array(
    v.pipe(
      v.strictObject({
        type: v.optional(oneOf([0, 1])),
        text: requiredString(),
        style: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
        key: v.optional(v.pipe(v.string(), v.nonEmpty(EMPTY), maxBytes(T.maxKeyBytes))),
        url: v.optional(v.string()),
      }),
      requiredForType({ 0: ['key'], 1: ['url'] }),
    ),
  ),
  minItems(1, 'buttons'),
  maxItems(T.maxButtons, 'buttons'),
  uniqueBy('key', 'button_list'),
);

/** checkbox: "选项个数不超过 20 个,最少1个"; mode 0 single choice (default), 1 multiple choice. */
const CheckboxSchema = v.strictObject({
  question_key: key(),
  option_list: v.pipe(
    v.array(v.strictObject({ id: optionId(), text: requiredString(), is_checked: v.optional(v.boolean()) })),
    minItems(1, 'options'),
    maxItems(T.maxCheckboxOptions, 'options'),
    uniqueBy('id', 'option_list'),
  ),
  mode: v.optional(oneOf([0, 1])),
});

/** submit_button.text defaults to 提交; key is required. */
const SubmitButtonSchema = v.strictObject({
  text: v.optional(v.string()),
  key: key(),
});

/** select_list: "一个消息最多支持 3 个选择器"; question_key unique. */
const SelectListSchema = v.pipe(
  v.array(
    v.strictObject({
      question_key: key(),
      title: v.optional(v.string()),
      selected_id: v.optional(v.string()),
      option_list: SelectOptionListSchema('option_list'),
    }),
  ),
  minItems(1, 'selects'),
  maxItems(T.maxSelects, 'selects'),
  uniqueBy('question_key', 'select_list'),
);

const commonEntries = {
  source: v.optional(SourceSchema),
  action_menu: v.optional(ActionMenuSchema),
};

/** "main_title.title和sub_title_text必须有一项填写" (text_notice; applied to button_interaction too). */
const titleOrSubtitle = <TCard extends { main_title?: { title?: string }; sub_title_text?: string }>() =>
  v.rawCheck<TCard>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const card = dataset.value;
    if (!card.main_title?.title && !card.sub_title_text) {
      addIssue({
        message: 'required unless sub_title_text is set',
        path: pathOf(card, 'main_title', 'title'),
      });
    }
  });

export const TextNoticeCardSchema = v.pipe(
  v.strictObject({
    card_type: v.literal('text_notice'),
    ...commonEntries,
    task_id: v.optional(TaskIdSchema),
    main_title: v.optional(MainTitleSchema),
    quote_area: v.optional(QuoteAreaSchema),
    emphasis_content: v.optional(EmphasisContentSchema),
    sub_title_text: v.optional(v.string()),
    horizontal_content_list: v.optional(HorizontalContentListSchema),
    jump_list: v.optional(JumpListSchema),
    card_action: NoticeCardActionSchema,
  }),
  titleOrSubtitle(),
);

export const NewsNoticeCardSchema = v.pipe(
  v.strictObject({
    card_type: v.literal('news_notice'),
    ...commonEntries,
    task_id: v.optional(TaskIdSchema),
    main_title: MainTitleWithTitleSchema,
    quote_area: v.optional(QuoteAreaSchema),
    image_text_area: v.optional(ImageTextAreaSchema),
    card_image: v.optional(CardImageSchema),
    vertical_content_list: v.optional(VerticalContentListSchema),
    horizontal_content_list: v.optional(HorizontalContentListSchema),
    jump_list: v.optional(JumpListSchema),
    card_action: NoticeCardActionSchema,
  }),
  /** "card_image和image_text_area两者必填一个字段,不可都不填". */
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    if (dataset.value.card_image === undefined && dataset.value.image_text_area === undefined) {
      addIssue({
        message: 'card_image or image_text_area is required',
        path: pathOf(dataset.value, 'card_image'),
      });
    }
  }),
);

export const ButtonInteractionCardSchema = v.pipe(
  v.strictObject({
    card_type: v.literal('button_interaction'),
    ...commonEntries,
    main_title: v.optional(MainTitleSchema),
    quote_area: v.optional(QuoteAreaSchema),
    sub_title_text: v.optional(v.string()),
    horizontal_content_list: v.optional(HorizontalContentListSchema),
    card_action: v.optional(InteractionCardActionSchema),
    task_id: v.optional(TaskIdSchema),
    button_selection: v.optional(ButtonSelectionSchema),
    button_list: ButtonListSchema,
    replace_text: optionalString(),
  }),
  titleOrSubtitle(),
);

export const VoteInteractionCardSchema = v.strictObject({
  card_type: v.literal('vote_interaction'),
  ...commonEntries,
  main_title: v.optional(MainTitleSchema),
  task_id: v.optional(TaskIdSchema),
  checkbox: CheckboxSchema,
  submit_button: SubmitButtonSchema,
  replace_text: optionalString(),
});

export const MultipleInteractionCardSchema = v.strictObject({
  card_type: v.literal('multiple_interaction'),
  ...commonEntries,
  main_title: v.optional(MainTitleSchema),
  task_id: v.optional(TaskIdSchema),
  select_list: SelectListSchema,
  submit_button: SubmitButtonSchema,
  replace_text: optionalString(),
});

/** Discriminated on card_type, so issues come from the one card schema the user meant. */
export const TemplateCardSchema = v.variant(
  'card_type',
  [
    TextNoticeCardSchema,
    NewsNoticeCardSchema,
    ButtonInteractionCardSchema,
    VoteInteractionCardSchema,
    MultipleInteractionCardSchema,
  ],
  discriminatorMessage(CARD_TYPE_NAMES),
);
