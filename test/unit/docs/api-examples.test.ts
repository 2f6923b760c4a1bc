import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type OpenApiDocument, openApiValidators, readOpenApi, schemaErrors } from '#test/helpers/openapi.js';

const DOCS = path.join(import.meta.dirname, '..', '..', '..', 'docs');
/** The pages whose curl examples are checked: the API reference, and the DLQ's routes in the operations guide. */
const PAGES = ['api.md', 'operations/dlq.md'];

interface Example {
  readonly page: string;
  /** Where it is in the page, for the failure message. */
  readonly line: number;
  readonly method: string;
  readonly path: string;
  /** `request` for a curl -d body, else the response status it documents. */
  readonly kind: 'request' | number;
  readonly body: unknown;
}

/**
 * The examples of docs/api.md: each curl command (method, path, `-d '…'` body), the `# 202 {…}` answers written
 * under it (possibly continued on more `#` lines), and the ```json blocks after it (the status view, or, in
 * the Errors section, the error envelope).
 */
function examplesOf(page: string, markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  let current: { method: string; path: string } | undefined;
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('### ')) section = line;
    if (line.startsWith('```json')) {
      const end = lines.indexOf('```', i + 1);
      const body = JSON.parse(lines.slice(i + 1, end).join('\n'));
      if (section.startsWith('### Errors'))
        examples.push({ page, line: i + 1, method: '*', path: '*', kind: 0, body });
      else if (current) examples.push({ page, line: i + 1, ...current, kind: 200, body });
      i = end;
      continue;
    }
    if (!line.startsWith('```sh')) continue;
    const end = lines.indexOf('```', i + 1);
    const block = lines.slice(i + 1, end).join('\n');
    const curl = /curl[^\n]*?"\$GW(\/[^"?]*)[^"]*"/.exec(block);
    if (curl) {
      // The block's first curl command, up to the next command or answer: a second one must not lend it a body.
      const command = block.slice(curl.index).split(/\n(?=curl |# )/)[0] as string;
      const data = /-d '([^']*)'/.exec(command);
      // curl posts any of its data options (-d @file, --data-urlencode, …) unless -X says otherwise.
      const posts = /\s(?:-d|--data(?:-[\w-]+)?)\s/.test(command);
      const method = /-X (\w+)/.exec(command)?.[1] ?? (posts ? 'POST' : 'GET');
      current = { method, path: curl[1] as string };
      if (data)
        examples.push({
          page,
          line: i + 1,
          ...current,
          kind: 'request',
          body: JSON.parse(data[1] as string),
        });
      const answer = /^# (\d{3}) (.*(?:\n#\s+.*)*)/m.exec(block);
      if (answer) {
        const json = (answer[2] as string).replace(/\n#\s+/g, '');
        examples.push({ page, line: i + 1, ...current, kind: Number(answer[1]), body: JSON.parse(json) });
      }
    }
    i = end;
  }
  return examples;
}

/**
 * The operation whose path template matches a concrete path (`/v1/messages/msg_…` → `/v1/messages/{id}`); a query
 * string is not part of the path.
 */
function operationOf(doc: OpenApiDocument, method: string, concreteUrl: string) {
  const concrete = concreteUrl.split('?')[0] as string;
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = item[method.toLowerCase()];
    if (re.test(concrete) && operation) return operation as OpenApiDocument;
  }
  throw new Error(`the docs show ${method} ${concrete}, which the OpenAPI document does not describe`);
}

const schemaName = (content: OpenApiDocument): string => {
  const ref: unknown = content?.content?.['application/json']?.schema?.$ref;
  if (typeof ref !== 'string') throw new Error('the document gives this example no schema');
  return ref.split('/').pop() as string;
};

describe('curl examples of the docs against docs/openapi.json', () => {
  const doc = readOpenApi();
  const schema = openApiValidators(doc);
  const examples = PAGES.flatMap((page) => examplesOf(page, readFileSync(path.join(DOCS, page), 'utf8')));

  it('finds the examples it is meant to check (a broken parser must not pass)', () => {
    expect(examples.filter((e) => e.kind === 'request').length).toBeGreaterThanOrEqual(2);
    expect(examples.filter((e) => typeof e.kind === 'number').length).toBeGreaterThanOrEqual(6);
  });

  it.each(PAGES)('finds curl examples in docs/%s', (page) => {
    expect(examples.filter((e) => e.page === page).length).toBeGreaterThan(0);
  });

  it.each(
    examples.map((e) => [`${e.method} ${e.path} ${e.kind} (docs/${e.page} line ${e.line})`, e] as const),
  )('validates %s', (_name, example) => {
    const name =
      example.kind === 0
        ? 'Error'
        : example.kind === 'request'
          ? schemaName(operationOf(doc, example.method, example.path).requestBody)
          : schemaName(operationOf(doc, example.method, example.path).responses[String(example.kind)]);
    expect(schemaErrors(schema(name), example.body)).toEqual([]);
  });
});
