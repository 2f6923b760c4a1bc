import {
  type MessageTemplate,
  renderTemplateBody,
  sampleVariables,
  type TemplateProblem,
  templateSyntaxProblems,
} from './templates.js';
import { validateMessageRequest } from './validate.js';

/**
 * Everything wrong with a template as config: its own text ({@link templateSyntaxProblems}), then — if that is
 * sound — the message it renders with sample values (`example`, else the first `enum` value, else the variable's
 * name), validated exactly like a request's body. So a body that is not its msgtype (a missing field, a field of
 * another msgtype, a card without its required parts) is refused when the config is read, not at the first send.
 *
 * @example templateProblems({ msgtype: 'text', text: { content: '{{x}}' } }) // [{ path: ['text', 'content'], message: "uses undeclared variable 'x' …" }]
 */
export function templateProblems(template: MessageTemplate): TemplateProblem[] {
  const syntax = templateSyntaxProblems(template);
  if (syntax.length > 0) return syntax;
  return renderedProblems(template, 'example').map((message) => ({ path: [], message }));
}

/**
 * The validation issues of the message a template renders with sample values (see `sampleVariables`), as
 * `field: message` lines; empty when it is a valid message. The Markdown fallback is not applied: it only ever
 * makes a valid markdown message into a valid text or textcard.
 */
export function renderedProblems(template: MessageTemplate, mode: 'example' | 'longest'): string[] {
  const { msgtype } = template;
  const body = renderTemplateBody(template[msgtype], sampleVariables(template, mode));
  const result = validateMessageRequest({ app: 'template', touser: 'sample', msgtype, [msgtype]: body });
  if (result.ok) return [];
  const how = mode === 'example' ? "with the variables' examples" : 'with every variable at its maxBytes';
  return result.issues.map((i) => `${i.field}: ${i.message} (rendered ${how})`);
}
