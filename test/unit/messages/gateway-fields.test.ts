import { describe, expect, it } from 'vitest';
import { validateMessageRequest } from '#lib/messages/index.js';
import {
  ascii,
  expectIssues,
  expectOnlyIssue,
  expectValid,
  messageBody,
} from '#test/helpers/messages-factories.js';

const text = (extra: Record<string, unknown>) => messageBody('text', extra);

describe('request body', () => {
  it.each([
    ['an array', []],
    ['null', null],
    ['a string', '{"app":"ops"}'],
    ['a number', 1],
  ])('rejects %s as the body', (_, body) => {
    expect(validateMessageRequest(body)).toEqual({
      ok: false,
      issues: [{ field: '(body)', message: 'must be a JSON object' }],
    });
  });

  it('names every missing required field of an empty object', () => {
    expect(expectIssues({})).toEqual([
      { field: 'app', message: 'required' },
      { field: 'touser', message: 'required: set at least one of touser, toparty, totag' },
      { field: 'msgtype', message: 'required' },
    ]);
  });

  it('rejects agentid, which the gateway sets from app', () => {
    expectOnlyIssue(text({ agentid: 1000002 }), 'agentid', 'not allowed: set by the gateway from app');
  });

  it('rejects unknown top-level fields and hints at snake_case', () => {
    expect(expectIssues(text({ callbackUrl: 'https://x.example', toUser: 'a', foo: 1 }))).toEqual([
      { field: 'callbackUrl', message: 'unknown field (did you mean callback_url?)' },
      { field: 'toUser', message: 'unknown field (did you mean touser?)' },
      { field: 'foo', message: 'unknown field' },
    ]);
  });

  it('rejects an unknown msgtype with the list of valid ones', () => {
    expectOnlyIssue(
      { app: 'ops', touser: 'a', msgtype: 'interactive_taskcard' },
      'msgtype',
      'must be one of text, image, voice, video, file, textcard, news, mpnews, markdown, miniprogram_notice, template_card',
    );
  });

  it('requires exactly one message object, matching msgtype', () => {
    expect(expectIssues(text({ markdown: { content: 'x' }, image: { media_id: 'm' } }))).toEqual([
      { field: 'markdown', message: 'not allowed with msgtype text: send exactly one message object' },
      { field: 'image', message: 'not allowed with msgtype text: send exactly one message object' },
    ]);
  });

  it('collects issues from every part of the body at once', () => {
    const issues = expectIssues({
      app: '',
      touser: 'a||b',
      msgtype: 'text',
      text: { content: ascii(2049) },
      priority: 'urgent',
    });

    expect(issues.map((issue) => issue.field)).toEqual(['app', 'priority', 'touser[1]', 'text.content']);
  });

  it('caps the issue list at 20', () => {
    const issues = expectIssues(text({ touser: Array.from({ length: 50 }, () => '') }));

    expect(issues).toHaveLength(20);
  });
});

describe('app', () => {
  it('is returned as given', () => {
    expect(expectValid(text({ app: 'ops-alerts_2' })).app).toBe('ops-alerts_2');
  });

  it('must be a non-empty name of letters, digits, _ and -, ≤64 characters', () => {
    expectOnlyIssue(text({ app: '' }), 'app', 'must not be empty');
    expectOnlyIssue(text({ app: 'ops alerts' }), 'app', 'may only contain letters, digits, _ and -');
    expectOnlyIssue(text({ app: ascii(65) }), 'app', '65 characters, max 64');
    expectOnlyIssue(text({ app: 7 }), 'app', 'must be a string');
    expectValid(text({ app: ascii(64) }));
  });
});

describe('priority', () => {
  it('defaults to normal', () => {
    expect(expectValid(text({})).priority).toBe('normal');
  });

  it('accepts high', () => {
    expect(expectValid(text({ priority: 'high' })).priority).toBe('high');
  });

  it('rejects anything else', () => {
    expectOnlyIssue(text({ priority: 'HIGH' }), 'priority', 'must be one of high, normal');
  });
});

describe('callback_url', () => {
  it('is returned as callbackUrl', () => {
    expect(expectValid(text({ callback_url: 'https://hooks.example.com/wecom?x=1' })).callbackUrl).toBe(
      'https://hooks.example.com/wecom?x=1',
    );
  });

  it.each([
    'http://hooks.example.com/',
    '/relative/path',
    'hooks.example.com',
    'https://',
    'ftp://x.example',
  ])('rejects %s', (url) => {
    expectOnlyIssue(text({ callback_url: url }), 'callback_url', 'must be an absolute https: URL');
  });

  it('is at most 2048 characters', () => {
    const base = 'https://hooks.example.com/';
    expectValid(text({ callback_url: base + ascii(2048 - base.length) }));
    expectOnlyIssue(
      text({ callback_url: base + ascii(2049 - base.length) }),
      'callback_url',
      '2049 characters, max 2048',
    );
  });
});

describe('metadata', () => {
  it('is returned as given', () => {
    expect(expectValid(text({ metadata: { ticket: 'OPS-1', env: 'prod' } })).metadata).toEqual({
      ticket: 'OPS-1',
      env: 'prod',
    });
  });

  it('accepts 20 pairs and rejects 21', () => {
    const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expectValid(text({ metadata: pairs(20) }));
    expectOnlyIssue(text({ metadata: pairs(21) }), 'metadata', '21 pairs, max 20');
  });

  it('limits keys to 64 and values to 512 characters', () => {
    expect(expectIssues(text({ metadata: { [ascii(65)]: 'v', note: '字'.repeat(513) } }))).toEqual([
      { field: `metadata.${ascii(65)}`, message: 'key is 65 characters, max 64' },
      { field: 'metadata.note', message: '513 characters, max 512' },
    ]);
  });

  it('counts user-perceived characters, not UTF-16 units: 512 flags or accented letters fit, 513 do not', () => {
    const flag = '🇨🇳'; // 4 UTF-16 units, 1 character
    const accented = 'e\u0301'; // e + combining acute: 2 units, 1 character
    expectValid(text({ metadata: { flags: flag.repeat(512), accents: accented.repeat(512) } }));
    expect(
      expectIssues(text({ metadata: { flags: flag.repeat(513), accents: accented.repeat(513) } })),
    ).toEqual([
      { field: 'metadata.flags', message: '513 characters, max 512' },
      { field: 'metadata.accents', message: '513 characters, max 512' },
    ]);
  });

  it('accepts only string values', () => {
    expectOnlyIssue(text({ metadata: { retries: 3 } }), 'metadata.retries', 'must be a string');
  });

  it('must be an object', () => {
    expectOnlyIssue(text({ metadata: ['a'] }), 'metadata', 'must be an object');
  });

  it('rejects keys that would not survive a round trip', () => {
    expectOnlyIssue(
      text({ metadata: JSON.parse('{"__proto__":"x"}') }),
      'metadata.__proto__',
      'reserved key',
    );
  });
});

describe('send options', () => {
  it('passes safe, enable_id_trans, enable_duplicate_check and duplicate_check_interval through', () => {
    const req = expectValid(
      text({ safe: 1, enable_id_trans: 1, enable_duplicate_check: 1, duplicate_check_interval: 1800 }),
    );

    expect(req.options).toEqual({
      safe: 1,
      enable_id_trans: 1,
      enable_duplicate_check: 1,
      duplicate_check_interval: 1800,
    });
  });

  it('leaves absent options out', () => {
    expect(expectValid(text({})).options).toEqual({});
  });

  it('allows safe 2 only for mpnews', () => {
    expectOnlyIssue(text({ safe: 2 }), 'safe', '2 is only allowed for msgtype mpnews');
    expectOnlyIssue(text({ safe: 3 }), 'safe', 'must be one of 0, 1, 2');
  });

  it('accepts only 0 or 1 for the flags', () => {
    expect(expectIssues(text({ enable_id_trans: true, enable_duplicate_check: '1' }))).toEqual([
      { field: 'enable_id_trans', message: 'must be one of 0, 1' },
      { field: 'enable_duplicate_check', message: 'must be one of 0, 1' },
    ]);
  });

  it('limits duplicate_check_interval to whole seconds in 1–14400 (4 hours)', () => {
    expectValid(text({ duplicate_check_interval: 14_400 }));
    expectOnlyIssue(
      text({ duplicate_check_interval: 14_401 }),
      'duplicate_check_interval',
      '14401 seconds, max 14400',
    );
    expectOnlyIssue(text({ duplicate_check_interval: 0 }), 'duplicate_check_interval', '0 seconds, min 1');
    expectOnlyIssue(
      text({ duplicate_check_interval: 1.5 }),
      'duplicate_check_interval',
      'must be an integer number of seconds',
    );
  });
});

describe('ttl_seconds', () => {
  it('is returned as ttlSeconds, a whole number of seconds from 1 to 14 days', () => {
    expect(expectValid(text({ ttl_seconds: 300 })).ttlSeconds).toBe(300);
    expect(expectValid(text({})).ttlSeconds).toBeUndefined();
    expectOnlyIssue(text({ ttl_seconds: 0 }), 'ttl_seconds', '0 seconds, min 1');
    expectOnlyIssue(text({ ttl_seconds: 1_209_601 }), 'ttl_seconds', '1209601 seconds, max 1209600');
    expectOnlyIssue(text({ ttl_seconds: 2.5 }), 'ttl_seconds', 'must be an integer number of seconds');
  });
});

describe('duplicate_protection', () => {
  it('opts a message out of the duplicate check with false; true is the default', () => {
    expect(expectValid(text({ duplicate_protection: false })).duplicateProtection).toBe(false);
    expect(expectValid(text({ duplicate_protection: true }))).not.toHaveProperty('duplicateProtection');
    expect(expectValid(text({}))).not.toHaveProperty('duplicateProtection');
  });

  it('must be a boolean, and cannot be false together with enable_duplicate_check: 1', () => {
    expectOnlyIssue(text({ duplicate_protection: 'no' }), 'duplicate_protection', 'must be true or false');
    expectOnlyIssue(
      text({ duplicate_protection: false, enable_duplicate_check: 1 }),
      'duplicate_protection',
      'false contradicts enable_duplicate_check: 1; send one of them',
    );
  });
});
