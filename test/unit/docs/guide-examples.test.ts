import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateCardUpdate, validateMessageRequest } from '#lib/messages/index.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';

const DOCS = path.join(import.meta.dirname, '..', '..', '..', 'docs');
const GUIDES = [
  'guides/idempotency.md',
  'guides/template-cards.md',
  'guides/wechat-plugin-markdown.md',
  'guides/long-content.md',
  'guides/robots.md',
  'guides/scheduling.md',
];

interface Example {
  readonly page: string;
  readonly line: number;
  /** The OpenAPI component the body is for, from the `<!-- example: Name -->` line above its ```json block. */
  readonly schema: string;
  readonly body: unknown;
}

/** Every ```json block a guide marks with `<!-- example: <schema> -->` on the line before it. */
function examplesOf(page: string): Example[] {
  const lines = readFileSync(path.join(DOCS, page), 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- example: (\w+) -->$/.exec(lines[i] as string);
    if (!marker) continue;
    if (lines[i + 1] !== '```json')
      throw new Error(`${page}:${i + 1}: the marker is not followed by a json block`);
    const end = lines.indexOf('```', i + 2);
    out.push({
      page,
      line: i + 2,
      schema: marker[1] as string,
      body: JSON.parse(lines.slice(i + 2, end).join('\n')),
    });
  }
  return out;
}

/**
 * The messages a body holds, as the gateway validates them one by one; a card update's new card is checked as the
 * card of a message, since the gateway validates it like a sent one.
 */
function messagesOf(e: Example): unknown[] {
  const body = e.body as { messages?: unknown[]; template_card?: unknown };
  if (e.schema === 'MessageRequest' || e.schema === 'RobotMessageRequest') return [e.body];
  if (e.schema === 'BatchRequest') return body.messages ?? [];
  if (e.schema === 'CardUpdate' && body.template_card !== undefined)
    return [{ app: 'ops', touser: 'alice', msgtype: 'template_card', template_card: body.template_card }];
  return [];
}

describe('request examples in the guides', () => {
  const schema = openApiValidators();
  const all = GUIDES.flatMap(examplesOf);

  it.each(GUIDES)('%s has request examples to check', (page) => {
    expect(all.filter((e) => e.page === page).length).toBeGreaterThan(0);
  });

  it.each(all.map((e) => [`${e.page}:${e.line} (${e.schema})`, e] as const))(
    '%s is accepted by the gateway and the OpenAPI document',
    (_, e) => {
      expect(schemaErrors(schema(e.schema), e.body)).toEqual([]);
      if (e.schema === 'CardUpdate') {
        const update = validateCardUpdate(e.body);
        expect(update.ok ? [] : update.issues).toEqual([]);
      }
      for (const message of messagesOf(e)) {
        const result = validateMessageRequest(message);
        expect(result.ok ? [] : result.issues).toEqual([]);
      }
    },
  );
});
