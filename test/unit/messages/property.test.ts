import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MSG_TYPES, type MsgType, toWecomSendBody, validateMessageRequest } from '#lib/messages/index.js';
import { appRequest, messageBody } from '#test/helpers/messages-factories.js';

const FIELDS = [
  'app',
  'priority',
  'callback_url',
  'metadata',
  'touser',
  'toparty',
  'totag',
  'msgtype',
  'safe',
  'enable_id_trans',
  'enable_duplicate_check',
  'duplicate_check_interval',
  ...MSG_TYPES,
];

/** Near-valid bodies: a valid example with some fields replaced by random JSON, so validation goes deep. */
const mutatedBody = fc
  .record({
    msgtype: fc.constantFrom(...MSG_TYPES),
    patch: fc.option(
      fc.dictionary(fc.constantFrom(...FIELDS, 'agentid', '__proto__'), fc.jsonValue(), { maxKeys: 3 }),
      { nil: {}, freq: 2 },
    ),
    deep: fc.option(fc.tuple(fc.string({ maxLength: 20 }), fc.jsonValue()), { nil: undefined, freq: 2 }),
  })
  .map(({ msgtype, patch, deep }) => {
    const body: Record<string, unknown> = { ...messageBody(msgtype as MsgType), ...patch };
    const content = body[msgtype];
    if (deep && content !== null && typeof content === 'object' && !Array.isArray(content)) {
      body[msgtype] = { ...content, [deep[0]]: deep[1] };
    }
    return body;
  });

let accepted = 0;

function checkResult(input: unknown): void {
  const result = validateMessageRequest(input);
  expect(typeof result.ok).toBe('boolean');
  if (!result.ok) {
    expect(result.issues.length).toBeGreaterThan(0);
    expect(result.issues.length).toBeLessThanOrEqual(20);
    for (const issue of result.issues) {
      expect(typeof issue.field).toBe('string');
      expect(issue.message).not.toBe('');
    }
    return;
  }
  accepted += 1;
  const body = toWecomSendBody(appRequest(result.value), 1000002);
  const msgObjects = Object.keys(body).filter((key) => (MSG_TYPES as readonly string[]).includes(key));
  expect(msgObjects).toEqual([result.value.msgtype]);
  expect(body.msgtype).toBe(result.value.msgtype);
  expect(body.agentid).toBe(1000002);
  expect(body).not.toHaveProperty('app');
  expect(body.touser ?? body.toparty ?? body.totag).toBeTypeOf('string');
  // The body must survive the JSON round trip the HTTP client performs.
  expect(JSON.parse(JSON.stringify(body))).toEqual(body);
}

describe('validateMessageRequest (properties)', () => {
  it('never throws on arbitrary JSON and always returns a result', () => {
    fc.assert(fc.property(fc.jsonValue(), checkResult), { numRuns: 1000 });
  });

  it('never throws on objects made of known field names with arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue(), { maxKeys: 8 }), checkResult),
      { numRuns: 1000 },
    );
  });

  it('turns every accepted near-valid body into a WeCom body with exactly one msgtype object', () => {
    accepted = 0;
    fc.assert(fc.property(mutatedBody, checkResult), { numRuns: 1000 });

    // Guard against a vacuous property: a good share of the mutated bodies must still be valid.
    expect(accepted).toBeGreaterThan(100);
  });
});
