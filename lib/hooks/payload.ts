import * as v from 'valibot';
import { PARSE_CONFIG, toValidationIssues } from '#lib/messages/index.js';
import { HookPayloadError } from './errors.js';
import type { HookInput } from './types.js';

/** Parses the raw body as JSON; 400 naming `(body)` otherwise. */
export function parseJsonBody(input: HookInput): unknown {
  const text = typeof input.rawBody === 'string' ? input.rawBody : input.rawBody.toString('utf8');
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
