import * as v from 'valibot';
import { PARSE_CONFIG, toValidationIssues } from '#lib/messages/index.js';
import { HookPayloadError } from './errors.js';
import type { HookInput } from './types.js';

/** Malformed UTF-8 is refused, not turned into U+FFFD: that would change what members read. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text; 400 naming `(body)` when it is not UTF-8 (JSON and forms are UTF-8, RFC 8259 §8.1). */
export function bodyText(raw: string | Buffer | undefined): string {
  if (raw === undefined || typeof raw === 'string') return raw ?? '';
  try {
    return UTF8.decode(raw);
  } catch {
    throw new HookPayloadError('the body is not valid UTF-8', [
      { field: '(body)', message: 'must be UTF-8' },
    ]);
  }
}

/** Parses the raw body as JSON; 400 naming `(body)` otherwise. */
export function parseJsonBody(input: HookInput): unknown {
  const text = bodyText(input.rawBody);
  try {
    return JSON.parse(text);
  } catch {
    throw new HookPayloadError('the body is not JSON', [{ field: '(body)', message: 'must be JSON' }]);
  }
}

/**
 * Checks a payload against the fields a source relies on (loose objects: vendors add fields over time). The error
 * says whose payload was expected and names every missing or mistyped field, e.g. `alerts[0].labels: required`.
 */
export function readPayload<TSchema extends v.GenericSchema>(
  schema: TSchema,
  payload: unknown,
  expected: string,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, payload, PARSE_CONFIG);
  if (result.success) return result.output;
  const issues = toValidationIssues(result.issues).map((i) => ({ ...i, field: i.field || '(body)' }));
  throw new HookPayloadError(`not ${expected}`, issues.slice(0, 20));
}

/** A header the source needs; 400 naming it when absent. */
export function requireHeader(input: HookInput, name: string, why: string): string {
  const value = input.headers[name]?.trim();
  if (!value)
    throw new HookPayloadError(`header ${name} is missing`, [
      { field: `headers.${name}`, message: `required: ${why}` },
    ]);
  return value;
}

/** Loose schemas for the value shapes vendors use. */
export const str = v.string();
export const optStr = v.optional(v.nullable(v.string()));
export const labelMap = v.record(v.string(), v.string());
export const optLabelMap = v.optional(labelMap, {});
