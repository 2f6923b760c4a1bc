import * as v from 'valibot';
import { GATEWAY_LIMITS } from './limits.js';
import type { ValidationIssue } from './types.js';

/**
 * Valibot actions whose messages read like `2049 bytes, max 2048`, plus the mapping from valibot
 * issues to our `{ field, message }` pairs. Every issue message names the numbers involved, so an
 * API user can fix the payload without reading WeCom's docs.
 */

export const EMPTY = 'must not be empty';

/** For limits WeCom states in bytes (字节): UTF-8 bytes, so one Chinese character counts 3. */
export const maxBytes = <T extends string>(max: number) =>
  v.maxBytes<T, number, (issue: v.MaxBytesIssue<T, number>) => string>(
    max,
    (issue) => `${issue.received} bytes, max ${max}`,
  );

const segmenter = new Intl.Segmenter();
/** User-perceived characters (graphemes): `é` written as e + combining accent, or a flag emoji, count 1. */
export const graphemeCount = (input: string): number => {
  let count = 0;
  for (const _ of segmenter.segment(input)) count++;
  return count;
};

/**
 * For limits WeCom states in characters (字, 文字, 汉字): graphemes. Segmenting is slow and runs on every request
 * (the app name), so the check first uses that a string never has more graphemes than UTF-16 code units. The
 * action carries its limit as `maxChars`, for the OpenAPI generator (a check's function cannot be read).
 */
export const maxChars = <T extends string>(max: number) =>
  Object.assign(
    v.check<T, (issue: v.CheckIssue<T>) => string>(
      (input) => input.length <= max || graphemeCount(input) <= max,
      (issue) => `${graphemeCount(issue.input)} characters, max ${max}`,
    ),
    { maxChars: max },
  );

export const minChars = <T extends string>(min: number) =>
  v.minGraphemes<T, number, (issue: v.MinGraphemesIssue<T, number>) => string>(
    min,
    (issue) => `${issue.received} characters, min ${min}`,
  );

export const maxItems = <T extends v.LengthInput>(max: number, noun: string) =>
  v.maxLength<T, number, (issue: v.MaxLengthIssue<T, number>) => string>(
    max,
    (issue) => `${issue.received} ${noun}, max ${max}`,
  );

export const minItems = <T extends v.LengthInput>(min: number, noun: string) =>
  v.minLength<T, number, (issue: v.MinLengthIssue<T, number>) => string>(
    min,
    (issue) => `${issue.received} ${noun}, min ${min}`,
  );

/** A required, non-empty string, optionally capped in bytes. */
export const requiredString = (max?: number) =>
  max === undefined
    ? v.pipe(v.string(), v.nonEmpty(EMPTY))
    : v.pipe(v.string(), v.nonEmpty(EMPTY), maxBytes(max));

/** An optional string, optionally capped in bytes. */
export const optionalString = (max?: number) =>
  v.optional(max === undefined ? v.string() : v.pipe(v.string(), maxBytes(max)));

/** `must be one of 0, 1, 2` for WeCom's small integer enums. */
export const oneOf = <const T extends readonly (string | number)[]>(options: T) =>
  v.picklist(options, (issue) =>
    issue.input === undefined ? 'required' : `must be one of ${options.join(', ')}`,
  );

/**
 * Message for `v.variant`: it reports both a non-object input (no path) and a missing or unknown
 * discriminator (path = the discriminator key).
 */
export const discriminatorMessage =
  (names: readonly string[]) =>
  (issue: v.BaseIssue<unknown>): string => {
    if (!issue.path) return 'must be an object';
    return issue.input === undefined ? 'required' : `must be one of ${names.join(', ')}`;
  };

type PathKey = string | number;

/** Builds an issue path for issues added by `rawCheck`, walking `root` so each item carries its value. */
export function pathOf(root: unknown, ...keys: PathKey[]): [v.IssuePathItem, ...v.IssuePathItem[]] {
  const items: v.IssuePathItem[] = [];
  let current: unknown = root;
  for (const key of keys) {
    const value = current === null || typeof current !== 'object' ? undefined : (current as never)[key];
    if (typeof key === 'number' && Array.isArray(current)) {
      items.push({ type: 'array', origin: 'value', input: current, key, value });
    } else {
      const input = (current !== null && typeof current === 'object' ? current : {}) as Record<
        string,
        unknown
      >;
      items.push({ type: 'object', origin: 'value', input, key: String(key), value });
    }
    current = value;
  }
  return items as [v.IssuePathItem, ...v.IssuePathItem[]];
}

/** `news.articles[3].title` from a valibot path (array indexes in brackets). */
export function formatPath(path: readonly v.IssuePathItem[] | undefined): string {
  let field = '';
  for (const item of path ?? []) {
    const key: unknown = item.key;
    if (typeof key === 'number') field += `[${key}]`;
    else if (typeof key === 'string') field += field ? `.${key}` : key;
  }
  return field;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'must be a string',
  number: 'must be a number',
  boolean: 'must be true or false',
  array: 'must be an array',
  object: 'must be an object',
  strict_object: 'must be an object',
  record: 'must be an object',
  variant: 'must be an object',
};

/**
 * Fallback message for issues whose schema has no message of its own (passed as `config.message`):
 * missing keys, unknown keys and wrong JSON types.
 */
export function plainMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === 'schema') {
    if (issue.expected === 'never') return 'unknown field';
    if (issue.input === undefined) return 'required';
    const words = TYPE_WORDS[issue.type];
    if (words) return words;
  }
  return issue.message;
}

export function toValidationIssues(issues: readonly v.BaseIssue<unknown>[]): ValidationIssue[] {
  return issues.map((issue) => ({ field: formatPath(issue.path), message: issue.message }));
}

/** Parse config shared by every schema: collect all issues, phrase them plainly. */
export const PARSE_CONFIG = { abortEarly: false, message: plainMessage } as const;

/** One issue per field (the first found), capped so a pathological body cannot produce a huge response. */
export function finalizeIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    if (seen.has(issue.field)) continue;
    seen.add(issue.field);
    out.push(issue);
    if (out.length === GATEWAY_LIMITS.maxIssues) break;
  }
  return out;
}
