import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateMessageRequest } from '#lib/messages/index.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';

const GUIDE = path.join(import.meta.dirname, '..', '..', '..', 'docs', 'guides', 'send-from-code.md');
const LANGUAGES = ['sh', 'python', 'js', 'go', 'java'];

/** The guide's code blocks in the languages it shows, with what each sends. */
function examples(): { lang: string; code: string }[] {
  const markdown = readFileSync(GUIDE, 'utf8');
  return [...markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```/gm)]
    .map((m) => ({ lang: m[1] as string, code: m[2] as string }))
    .filter((e) => LANGUAGES.includes(e.lang));
}

/** The first JSON object in the code that is a message (`{"app": …}`), cut out by balancing its braces. */
function messageIn(code: string): unknown {
  const start = code.indexOf('{"app"');
  if (start < 0) throw new Error('no {"app": …} message in the example');
  let depth = 0;
  for (let i = start; i < code.length; i++) {
    if (code[i] === '{') depth++;
    if (code[i] === '}' && --depth === 0) return JSON.parse(code.slice(start, i + 1));
  }
  throw new Error('unbalanced braces');
}

describe('docs/guides/send-from-code.md', () => {
  const all = examples();
  const schema = openApiValidators()('MessageRequest');

  it('shows every language', () => {
    expect(new Set(all.map((e) => e.lang))).toEqual(new Set(LANGUAGES));
  });

  it.each(all.map((e) => [e.lang, e] as const))(
    '%s: sends a message the gateway and the OpenAPI document accept, safely retried',
    (_, e) => {
      const body = messageIn(e.code);
      expect(validateMessageRequest(body).ok).toBe(true);
      expect(schemaErrors(schema, body)).toEqual([]);
      expect(e.code).toContain('/v1/messages');
      expect(e.code).toMatch(/Bearer/);
      expect(e.code).toContain('Idempotency-Key');
      if (e.lang !== 'sh') expect(e.code).toMatch(/429/);
    },
  );
});
