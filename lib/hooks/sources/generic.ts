import * as v from 'valibot';
import { readPayload } from '../payload.js';
import type { HookSourceAdapter } from '../types.js';

/**
 * Any JSON object or array. The hook's `template` (mustache) turns it into markdown; without one,
 * {@link DEFAULT_TEMPLATE} picks the fields most senders use, and if none is there the top-level values are listed.
 * A sender that sets `Idempotency-Key` gets its retries deduplicated.
 */
const AnyJson = v.union(
  [v.record(v.string(), v.unknown()), v.array(v.unknown())],
  'must be a JSON object or array',
);

/** Section tags stand on their own lines, so mustache drops those lines when a field is absent. */
export const DEFAULT_TEMPLATE = [
  '{{#title}}',
  '## {{title}}',
  '{{/title}}',
  '{{^title}}',
  '{{#subject}}',
  '## {{subject}}',
  '{{/subject}}',
  '{{/title}}',
  '{{#status}}',
  '> status: **{{status}}**',
  '{{/status}}',
  ...['summary', 'message', 'text', 'description'].flatMap((f) => [`{{#${f}}}`, `{{${f}}}`, `{{/${f}}}`]),
  '{{#url}}',
  '[Open]({{url}})',
  '{{/url}}',
  '{{^url}}',
  '{{#link}}',
  '[Open]({{link}})',
  '{{/link}}',
  '{{/url}}',
].join('\n');

const show = (x: unknown): string =>
  typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : JSON.stringify(x);

/** `**key:** value` for each top-level entry: the last resort when no template field matched. */
export function listing(payload: unknown): string {
  const entries = Array.isArray(payload)
    ? payload.map((x, i) => [String(i), x] as const)
    : Object.entries(payload as object);
  return entries.map(([k, x]) => `**${k}:** ${show(x).replace(/\s+/g, ' ')}`).join('\n');
}

export const generic: HookSourceAdapter = {
  source: 'generic',
  defaultMsgtype: 'markdown',
  translate(payload, input) {
    readPayload(AnyJson, payload, 'a JSON object or array');
    const key = input.headers['idempotency-key']?.trim();
    return { event: 'generic', ...(key ? { deliveryKey: key } : {}) };
  },
};
