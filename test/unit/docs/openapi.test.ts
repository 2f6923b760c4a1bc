import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { CARD_TYPE_NAMES, MSG_TYPES, type MsgType, validateMessageRequest } from '#lib/messages/index.js';
import { ROUTES, routeKey } from '#lib/resources/index.js';
import { cardBody, messageBody } from '#test/helpers/messages-factories.js';
import { OPENAPI_FILE, openApiValidators, readOpenApi, schemaErrors } from '#test/helpers/openapi.js';
import { caseInsensitivePattern } from '../../../scripts/openapi/document.js';
import { renderOpenApi } from '../../../scripts/openapi.js';

describe('OpenAPI document (docs/openapi.json)', () => {
  let schema: ReturnType<typeof openApiValidators>;
  beforeAll(() => {
    schema = openApiValidators();
  });
  const errorsFor = (body: unknown) => schemaErrors(schema('MessageRequest'), body);

  it('is what the validator schemas give today (run `npm run openapi` after changing them)', async () => {
    expect(await readFile(OPENAPI_FILE, 'utf8')).toBe(await renderOpenApi());
  });

  it('declares OpenAPI 3.1 with a schema for every body it references', () => {
    const doc = readOpenApi();
    expect(doc.openapi).toBe('3.1.0');
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/\w+/g) ?? [];
    for (const ref of new Set(refs)) expect(() => schema(ref.split('/').pop() as string)).not.toThrow();
  });

  it('documents exactly the routes the gateway serves (lib/resources ROUTES)', () => {
    const documented = Object.entries(readOpenApi().paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map(routeKey).sort());
  });

  it.each(MSG_TYPES)('accepts the %s example that the validator accepts', (msgtype) => {
    const body = messageBody(msgtype, { priority: 'high', metadata: { deploy: '4711' } });
    expect(validateMessageRequest(body).ok).toBe(true);
    expect(errorsFor(body)).toEqual([]);
  });

  it.each(CARD_TYPE_NAMES)('accepts the %s template card example', (cardType) => {
    expect(errorsFor(cardBody(cardType))).toEqual([]);
  });

  it('never rejects a message the gateway accepts (random gateway fields and recipients)', () => {
    const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const ids = fc.array(fc.stringMatching(/^[0-9]{1,9}$/), { maxLength: 5 });
    const body = fc
      .record({
        msgtype: fc.constantFrom(...MSG_TYPES),
        priority: optional(fc.constantFrom('high', 'normal')),
        metadata: optional(
          fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string(), { maxKeys: 3 }),
        ),
        callback_url: optional(fc.webUrl({ validSchemes: ['https'] })),
        touser: fc.oneof(fc.constant('@all'), fc.array(fc.stringMatching(/^[A-Za-z0-9_.@-]{1,20}$/))),
        toparty: optional(
          fc.oneof(
            ids,
            ids.map((a) => a.join('|')),
            fc.nat(99_999),
          ),
        ),
        safe: optional(fc.constantFrom(0, 1)),
        duplicate_check_interval: optional(fc.integer({ min: 1, max: 14_400 })),
      })
      .map(({ msgtype, ...fields }) => ({
        ...messageBody(msgtype as MsgType),
        ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      }));
    let accepted = 0;
    fc.assert(
      fc.property(body, (b) => {
        if (!validateMessageRequest(b).ok) return;
        accepted++;
        expect(errorsFor(b)).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it.each([
    ['an unknown field (typo)', { callbackUrl: 'https://hooks.example.com' }],
    ['agentid, which the gateway sets', { agentid: 1000002 }],
    ['a second message object', { markdown: { content: 'x' } }],
    ['text.content over 2048 UTF-8 bytes', { text: { content: '中'.repeat(683) } }],
    ['a non-https callback_url', { callback_url: 'http://hooks.example.com' }],
    [
      'more than 20 metadata pairs',
      { metadata: Object.fromEntries([...Array(21)].map((_, i) => [`k${i}`, 'v'])) },
    ],
  ])('rejects %s, as the gateway does', (_what, patch) => {
    const body = { ...messageBody('text'), ...patch };
    expect(validateMessageRequest(body).ok).toBe(false);
    expect(errorsFor(body)).not.toEqual([]);
  });

  it('rejects a message without any recipient', () => {
    const { touser: _, ...body } = messageBody('text');
    expect(errorsFor(body)).not.toEqual([]);
  });

  it('writes case-insensitive regexes as JSON Schema patterns', () => {
    const pattern = new RegExp(caseInsensitivePattern('^https?:\\/\\/\\S'));
    expect(['HTTP://x', 'hTtPs://x', 'https://x'].map((s) => pattern.test(s))).toEqual([true, true, true]);
    expect(['ftp://x', 'https:// x', 'https//x'].map((s) => pattern.test(s))).toEqual([false, false, false]);
    expect(() => caseInsensitivePattern('^[a-z]+$')).toThrow(/character class/);
  });
});
