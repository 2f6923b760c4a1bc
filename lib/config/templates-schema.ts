import * as v from 'valibot';
import {
  MSG_TYPES,
  type MsgType,
  pathOf,
  TEMPLATE_VARIABLE_NAME,
  templateProblems,
} from '#lib/messages/index.js';
import { isPlainObject } from '#lib/util/index.js';

/**
 * Config for message templates (`apps.<app>.templates.<id>`, docs/templates.md): a WeCom body of the declared
 * msgtype with plain `{{name}}` tags in its string leaves, and the variables a request fills them with. Every
 * template is rendered with its variables' examples when the config is read, and the result validated like a
 * message, so an invalid template stops a start (or is not applied on a reload) instead of failing its first send.
 */

const TEMPLATE_ID = /^[A-Za-z0-9_-]{1,64}$/;

const positiveInt = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.minValue(1, 'must be >= 1'),
);

export const TemplateVariableSchema = v.strictObject({
  required: v.optional(v.boolean('must be true or false')),
  maxBytes: v.optional(positiveInt),
  enum: v.optional(
    v.pipe(v.array(v.string('must be a string')), v.minLength(1, 'must list at least one value')),
  ),
  pattern: v.optional(v.string('must be a string')),
  example: v.optional(v.string('must be a string')),
  description: v.optional(v.string('must be a string')),
});

/** A msgtype's object in a template: checked in full by rendering it (templateProblems). */
const body = v.optional(v.custom<Record<string, unknown>>(isPlainObject, 'must be a JSON object'));

export const TemplateSchema = v.pipe(
  v.strictObject({
    msgtype: v.picklist(
      MSG_TYPES,
      'must be a WeCom msgtype (text, markdown, textcard, news, mpnews, template_card, …)',
    ),
    description: v.optional(v.string('must be a string')),
    variables: v.optional(
      v.record(
        v.pipe(
          v.string(),
          v.regex(
            TEMPLATE_VARIABLE_NAME,
            'variable names are 1-64 of [A-Za-z0-9_], not starting with a digit',
          ),
        ),
        TemplateVariableSchema,
      ),
    ),
    text: body,
    image: body,
    voice: body,
    video: body,
    file: body,
    textcard: body,
    news: body,
    mpnews: body,
    markdown: body,
    miniprogram_notice: body,
    template_card: body,
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const problem of templateProblems(dataset.value)) {
      addIssue({
        message: problem.message,
        ...(problem.path.length > 0 && { path: pathOf(dataset.value, ...problem.path) }),
      });
    }
  }),
);

export const TemplatesSchema = v.record(
  v.pipe(v.string(), v.regex(TEMPLATE_ID, 'template ids are 1-64 of [A-Za-z0-9_-]')),
  TemplateSchema,
);

export type TemplateConfig = v.InferOutput<typeof TemplateSchema>;

// A body key for every msgtype: a new msgtype that is not listed above fails to compile here.
type MissingBodyKeys = Exclude<MsgType, keyof TemplateConfig>;
const everyMsgtypeHasABodyKey: MissingBodyKeys extends never ? true : MissingBodyKeys = true;
void everyMsgtypeHasABodyKey;
