import Mustache from 'mustache';
import { isPlainObject } from '#lib/util/index.js';
import { MSG_TYPE_NAMES } from './limits.js';
import type { MsgType, ValidationIssue } from './types.js';

/**
 * Message templates by id (config `apps.<app>.templates.<id>`, docs/templates.md): a WeCom body of any msgtype whose
 * string leaves hold plain `{{name}}` tags, filled from a request's `variables` when the message is accepted.
 *
 * Only string leaves are rendered — object keys, numbers, booleans and the shape of arrays never change — and a
 * value is inserted as data: it is never parsed as template syntax and never as JSON, so `"}`, `{{x}}` or a whole
 * JSON document in a variable cannot add a field, a button or a card part.
 */

/** One declared variable: what a request's value must satisfy. */
export interface TemplateVariable {
  /** Present and not empty. An optional variable that is not given renders as the empty string. */
  readonly required?: boolean;
  /** UTF-8 bytes, the unit WeCom counts most of its limits in. */
  readonly maxBytes?: number;
  readonly enum?: readonly string[];
  /** A regular expression the whole value must match (compiled with the `u` flag). */
  readonly pattern?: string;
  /** Shown by `GET /v1/templates`; used instead of a placeholder when the config is checked. */
  readonly example?: string;
  readonly description?: string;
}

/** A template as the config holds it: `msgtype`, the body under that msgtype's key, and the variables. */
export type MessageTemplate = {
  readonly msgtype: MsgType;
  readonly variables?: Readonly<Record<string, TemplateVariable>>;
  readonly description?: string;
} & { readonly [K in MsgType]?: Readonly<Record<string, unknown>> };

/** The templates of an app, by id; undefined for an app without templates (or one the caller may not use). */
export type TemplateLookup = (app: string) => Readonly<Record<string, MessageTemplate>> | undefined;

/** Letters, digits and `_`: no dots, so a name never reaches into an object the way mustache's dotted names do. */
export const TEMPLATE_VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A parsed string leaf: literal text and the variables between it. */
type Piece = string | { readonly variable: string };

/** A problem with a template (config) or with a request's variables; `path` is relative to the template. */
export interface TemplateProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

const parsed = new Map<string, Piece[] | string>();
/** Sources come from the config; the cap only bounds what a long-lived container keeps across many edits. */
const MAX_PARSED = 10_000;

/**
 * Parses one string leaf. Mustache's parser (the hooks' syntax) finds the tags; only plain `{{name}}` tags are
 * accepted, because sections, partials and unescaped tags would let a template's output depend on more than string
 * substitution. Returns the pieces, or a message saying what is wrong.
 */
export function parseTemplateString(source: string): Piece[] | string {
  const cached = parsed.get(source);
  if (cached !== undefined) return cached;
  let result: Piece[] | string;
  try {
    result = toPieces(source, Mustache.parse(source) as unknown as [string, string, number, number][]);
  } catch (err) {
    result = `does not parse: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(source, result);
  return result;
}

function toPieces(source: string, tokens: [string, string, number, number][]): Piece[] | string {
  const pieces: Piece[] = [];
  for (const [type, value, start, end] of tokens) {
    if (type === 'text') pieces.push(value);
    else if (type === 'name') {
      if (!TEMPLATE_VARIABLE_NAME.test(value)) {
        return `{{${value}}}: variable names are 1-64 of [A-Za-z0-9_], not starting with a digit (no dots)`;
      }
      pieces.push({ variable: value });
    } else {
      return `${source.slice(start, end)} is not a plain {{name}} tag: sections, inverted sections, partials, comments, unescaped tags and delimiter changes are not supported`;
    }
  }
  return pieces;
}

/** Every string leaf of a body with its path, depth first in key order. */
function* stringLeaves(
  node: unknown,
  path: (string | number)[] = [],
): Generator<{ path: (string | number)[]; value: string }> {
  if (typeof node === 'string') yield { path, value: node };
  else if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* stringLeaves(item, [...path, i]);
  } else if (isPlainObject(node)) {
    for (const [key, item] of Object.entries(node)) yield* stringLeaves(item, [...path, key]);
  }
}

/**
 * Renders a template body with values for its variables: every string leaf is rendered, everything else is copied.
 * Missing values render as the empty string (the caller checked required variables).
 *
 * @example renderTemplateBody({ title: 'deploy of {{service}}' }, { service: 'api' }) // { title: 'deploy of api' }
 */
export function renderTemplateBody(body: unknown, values: Readonly<Record<string, string>>): unknown {
  if (typeof body === 'string') {
    const pieces = parseTemplateString(body);
    // The config check rejects such a leaf; should one get here anyway, it is sent as written, never half-parsed.
    if (typeof pieces === 'string') return body;
    return pieces
      .map((p) => (typeof p === 'string' ? p : Object.hasOwn(values, p.variable) ? values[p.variable] : ''))
      .join('');
  }
  if (Array.isArray(body)) return body.map((item) => renderTemplateBody(item, values));
  if (isPlainObject(body)) {
    return Object.fromEntries(Object.entries(body).map(([k, item]) => [k, renderTemplateBody(item, values)]));
  }
  return body;
}

const patterns = new Map<string, RegExp | null>();

/** The variable's pattern anchored to the whole value; null when it does not compile. */
export function variablePattern(pattern: string): RegExp | null {
  let re = patterns.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(`^(?:${pattern})$`, 'u');
    } catch {
      re = null;
    }
    patterns.set(pattern, re);
  }
  return re;
}

/**
 * Why a value does not satisfy a variable's rules, or undefined. Messages never repeat the value: variables may
 * carry data the caller would not want in a log line.
 */
export function variableValueProblem(rules: TemplateVariable, value: string): string | undefined {
  if (value === '') return rules.required ? 'required' : undefined;
  if (rules.maxBytes !== undefined && Buffer.byteLength(value, 'utf8') > rules.maxBytes) {
    return `longer than ${rules.maxBytes} bytes (${Buffer.byteLength(value, 'utf8')} bytes)`;
  }
  if (rules.enum !== undefined && !rules.enum.includes(value)) {
    return `must be one of ${rules.enum.join(', ')}`;
  }
  if (rules.pattern !== undefined && variablePattern(rules.pattern)?.test(value) !== true) {
    return `must match ${rules.pattern}`;
  }
  return undefined;
}

const MAX_VARIABLE_ISSUES = 20;

/**
 * Checks a request's `variables` against a template's declarations and returns the values as strings. Numbers and
 * booleans are accepted and written as JSON writes them (`4711`, `true`), since CI systems pass build numbers and
 * flags untyped; null, objects and arrays are refused — a variable fills a string, never a structure.
 */
export function checkVariables(
  templateId: string,
  template: MessageTemplate,
  given: unknown,
): { ok: true; values: Record<string, string> } | { ok: false; issues: ValidationIssue[] } {
  if (given !== undefined && !isPlainObject(given)) {
    return { ok: false, issues: [{ field: 'variables', message: 'must be an object of strings' }] };
  }
  const declared = template.variables ?? {};
  const issues: ValidationIssue[] = [];
  const values: Record<string, string> = {};
  for (const [name, raw] of Object.entries(given ?? {})) {
    const field = `variables.${name.slice(0, 64)}`;
    if (!Object.hasOwn(declared, name)) {
      issues.push({ field, message: `not a variable of template '${templateId}'` });
    } else if (typeof raw === 'string') values[name] = raw;
    else if ((typeof raw === 'number' && Number.isFinite(raw)) || typeof raw === 'boolean') {
      values[name] = String(raw);
    } else issues.push({ field, message: 'must be a string (numbers and booleans are converted)' });
  }
  for (const [name, rules] of Object.entries(declared)) {
    if (issues.some((i) => i.field === `variables.${name}`)) continue;
    const problem = variableValueProblem(rules, values[name] ?? '');
    if (problem !== undefined) issues.push({ field: `variables.${name}`, message: problem });
  }
  return issues.length > 0
    ? { ok: false, issues: issues.slice(0, MAX_VARIABLE_ISSUES) }
    : { ok: true, values };
}

const MSG_TYPE_SET: ReadonlySet<string> = new Set(MSG_TYPE_NAMES);

/**
 * A `POST /v1/messages` body that names a template (`template`, `variables`) turned into the body a caller could
 * have built by hand: the gateway fields and recipients kept, `msgtype` and its object rendered. What comes out
 * then passes the validation every message passes (WeCom's limits, the Markdown fallback). A body without
 * `template` or `variables` is returned unchanged.
 *
 * @example
 * expandTemplateRequest({ app: 'ops', touser: 'zhangsan', template: 'deploy_done', variables: { service: 'api' } }, lookup)
 * // { ok: true, body: { app: 'ops', touser: 'zhangsan', msgtype: 'template_card', template_card: { … } } }
 */
export function expandTemplateRequest(
  body: Readonly<Record<string, unknown>>,
  lookup: TemplateLookup | undefined,
): { ok: true; body: Record<string, unknown> } | { ok: false; issues: ValidationIssue[] } {
  const { template: id, variables, ...rest } = body;
  if (!Object.hasOwn(body, 'template')) {
    if (!Object.hasOwn(body, 'variables')) return { ok: true, body: { ...body } };
    return { ok: false, issues: [{ field: 'variables', message: 'only allowed with template' }] };
  }
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(rest)) {
    if (key === 'msgtype') {
      issues.push({ field: key, message: 'not allowed with template: the template sets the msgtype' });
    } else if (MSG_TYPE_SET.has(key)) {
      issues.push({ field: key, message: 'not allowed with template: the template is the message body' });
    }
  }
  if (typeof id !== 'string' || id === '') {
    issues.push({ field: 'template', message: 'must be the id of one of the app’s templates' });
  }
  if (typeof rest.app !== 'string') {
    issues.push({ field: 'app', message: 'required with template: the app whose template it is' });
  }
  if (issues.length > 0 || typeof id !== 'string' || typeof rest.app !== 'string')
    return { ok: false, issues };

  const templates = lookup?.(rest.app);
  const template = templates !== undefined && Object.hasOwn(templates, id) ? templates[id] : undefined;
  if (template === undefined) {
    return {
      ok: false,
      issues: [
        {
          field: 'template',
          message: `unknown template '${id.slice(0, 64)}' for app '${rest.app.slice(0, 64)}'`,
        },
      ],
    };
  }
  const checked = checkVariables(id, template, variables);
  if (!checked.ok) return checked;
  const { msgtype } = template;
  return {
    ok: true,
    body: { ...rest, msgtype, [msgtype]: renderTemplateBody(template[msgtype], checked.values) },
  };
}

/**
 * Problems of a template's own text (config): a string leaf that does not parse or uses anything but plain tags,
 * a tag naming an undeclared variable, a pattern that does not compile, an example its own rules refuse.
 */
export function templateSyntaxProblems(template: MessageTemplate): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  for (const other of MSG_TYPE_NAMES) {
    if (other !== template.msgtype && template[other] !== undefined) {
      problems.push({ path: [other], message: `not allowed with msgtype ${template.msgtype}` });
    }
  }
  if (!isPlainObject(template[template.msgtype])) {
    problems.push({
      path: [template.msgtype],
      message: `required: the ${template.msgtype} object of the message`,
    });
  }
  const declared = template.variables ?? {};
  for (const [name, rules] of Object.entries(declared)) {
    if (rules.pattern !== undefined && variablePattern(rules.pattern) === null) {
      problems.push({ path: ['variables', name, 'pattern'], message: 'is not a valid regular expression' });
    } else if (rules.example !== undefined) {
      const problem = variableValueProblem(rules, rules.example);
      if (problem !== undefined) {
        problems.push({
          path: ['variables', name, 'example'],
          message: `its own rules refuse it: ${problem}`,
        });
      }
    }
  }
  for (const leaf of stringLeaves(template[template.msgtype], [template.msgtype])) {
    const pieces = parseTemplateString(leaf.value);
    if (typeof pieces === 'string') {
      problems.push({ path: leaf.path, message: pieces });
      continue;
    }
    const undeclared = pieces.flatMap((p) =>
      typeof p !== 'string' && !Object.hasOwn(declared, p.variable) ? [p.variable] : [],
    );
    if (undeclared.length > 0) {
      problems.push({
        path: leaf.path,
        message: `uses undeclared variable${undeclared.length > 1 ? 's' : ''} ${[...new Set(undeclared)].map((n) => `'${n}'`).join(', ')} (declare it under variables)`,
      });
    }
  }
  return problems;
}

/**
 * Values to render a template with when checking it: each variable's `example`, else its first `enum` value,
 * else its name. `longest`: values as long as `maxBytes` allows (unbounded variables keep the sample), to see
 * whether the largest message a caller may send still fits WeCom's limits.
 */
export function sampleVariables(
  template: MessageTemplate,
  mode: 'example' | 'longest' = 'example',
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template.variables ?? {}).map(([name, rules]) => {
      const sample = rules.example ?? rules.enum?.[0] ?? name;
      if (mode === 'example') return [name, sample];
      if (rules.enum !== undefined) {
        return [name, rules.enum.reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a))];
      }
      return [name, rules.maxBytes === undefined ? sample : 'x'.repeat(rules.maxBytes)];
    }),
  );
}
