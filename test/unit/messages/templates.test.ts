import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkVariables,
  expandTemplateRequest,
  type MessageTemplate,
  parseTemplateString,
  renderTemplateBody,
  type TemplateLookup,
  validateMessageRequest,
} from '#lib/messages/index.js';

const DEPLOY_DONE: MessageTemplate = {
  msgtype: 'template_card',
  template_card: {
    card_type: 'text_notice',
    main_title: { title: 'Deploy of {{service}} finished', desc: 'to {{env}}' },
    horizontal_content_list: [{ keyname: 'version', value: '{{version}}' }],
    card_action: { type: 1, url: 'https://ci.example.com/{{service}}' },
  },
  variables: {
    service: { required: true, maxBytes: 16, pattern: '[a-z][a-z0-9-]*' },
    env: { required: true, enum: ['prod', 'staging'] },
    version: {},
  },
};
const NOTE: MessageTemplate = {
  msgtype: 'markdown',
  markdown: { content: '## {{title}}\n{{body}}' },
  variables: { title: { required: true }, body: {} },
};
const lookup: TemplateLookup = (app) =>
  app === 'ops' ? { deploy_done: DEPLOY_DONE, note: NOTE } : undefined;
const request = (extra: Record<string, unknown>) => ({ app: 'ops', touser: 'zhangsan', ...extra });

/** The JSON shape of a value with every string replaced by one marker: what rendering must never change. */
const shape = (node: unknown): unknown =>
  typeof node === 'string'
    ? 'S'
    : Array.isArray(node)
      ? node.map(shape)
      : node !== null && typeof node === 'object'
        ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, shape(v)]))
        : node;

describe('renderTemplateBody', () => {
  it('fills string leaves only: keys, numbers, booleans, null and array lengths are copied', () => {
    const body = {
      '{{k}}': 'key stays',
      n: 1,
      flag: true,
      none: null,
      list: ['{{k}}', 2, ['{{k}}']],
      nested: { text: 'a {{k}} b' },
    };

    expect(renderTemplateBody(body, { k: 'V' })).toEqual({
      '{{k}}': 'key stays',
      n: 1,
      flag: true,
      none: null,
      list: ['V', 2, ['V']],
      nested: { text: 'a V b' },
    });
  });

  it('renders a missing optional variable as the empty string', () => {
    expect(renderTemplateBody({ t: '[{{a}}]' }, {})).toEqual({ t: '[]' });
  });

  it('inserts a value as data whatever it holds: JSON, quotes, braces or template syntax (property)', () => {
    const nasty = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '"}',
        '"},{"card_type":"button_interaction"',
        '{{x}}',
        '{{{x}}}',
        '{{#x}}y{{/x}}',
        '\\',
      ),
      fc.json(),
    );
    fc.assert(
      fc.property(nasty, nasty, (service, env) => {
        const body = DEPLOY_DONE.template_card;
        const rendered = renderTemplateBody(body, { service, env }) as typeof body;

        expect(shape(rendered)).toEqual(shape(body));
        expect(rendered).toEqual({
          card_type: 'text_notice',
          main_title: { title: `Deploy of ${service} finished`, desc: `to ${env}` },
          horizontal_content_list: [{ keyname: 'version', value: '' }],
          card_action: { type: 1, url: `https://ci.example.com/${service}` },
        });
        // Serialised, the value is one JSON string: it cannot close the string or the object around it.
        expect(JSON.parse(JSON.stringify(rendered))).toEqual(rendered);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseTemplateString', () => {
  it.each([
    ['{{#items}}x{{/items}}', /not a plain \{\{name\}\} tag/],
    ['{{^none}}x{{/none}}', /not a plain/],
    ['{{{raw}}}', /not a plain/],
    ['{{&raw}}', /not a plain/],
    ['{{> partial}}', /not a plain/],
    ['{{! comment }}', /not a plain/],
    ['{{=<% %>=}}', /not a plain/],
    ['{{a.b}}', /no dots/],
    ['{{unclosed', /does not parse/],
  ])('refuses %s', (source, message) => {
    expect(parseTemplateString(source)).toMatch(message);
  });

  it('reads plain tags with or without spaces', () => {
    expect(parseTemplateString('a {{ x }} b {{y}}')).toEqual([
      'a ',
      { variable: 'x' },
      ' b ',
      { variable: 'y' },
    ]);
  });
});

describe('checkVariables', () => {
  const check = (given: unknown) => checkVariables('deploy_done', DEPLOY_DONE, given);

  it('accepts strings, and numbers and booleans written as JSON writes them', () => {
    expect(check({ service: 'api', env: 'prod', version: 4711 })).toEqual({
      ok: true,
      values: { service: 'api', env: 'prod', version: '4711' },
    });
    expect(check({ service: 'api', env: 'prod', version: false })).toMatchObject({
      values: { version: 'false' },
    });
  });

  it.each([
    [{ env: 'prod' }, 'variables.service', 'required'],
    [{ service: '', env: 'prod' }, 'variables.service', 'required'],
    [{ service: 'a'.repeat(17), env: 'prod' }, 'variables.service', 'longer than 16 bytes (17 bytes)'],
    [{ service: '服务服务服务', env: 'prod' }, 'variables.service', 'longer than 16 bytes (18 bytes)'],
    [{ service: 'api', env: 'dev' }, 'variables.env', 'must be one of prod, staging'],
    [{ service: 'API!', env: 'prod' }, 'variables.service', 'must match [a-z][a-z0-9-]*'],
    [{ service: 'api', env: 'prod', x: '1' }, 'variables.x', "not a variable of template 'deploy_done'"],
    [
      { service: { a: 1 }, env: 'prod' },
      'variables.service',
      'must be a string (numbers and booleans are converted)',
    ],
    [
      { service: ['api'], env: 'prod' },
      'variables.service',
      'must be a string (numbers and booleans are converted)',
    ],
    [
      { service: null, env: 'prod' },
      'variables.service',
      'must be a string (numbers and booleans are converted)',
    ],
  ])('refuses %j: %s %s', (given, field, message) => {
    const result = check(given);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toContainEqual({ field, message });
  });

  it('matches the pattern against the whole value, not a part of it', () => {
    expect(check({ service: 'ok-then-BAD', env: 'prod' }).ok).toBe(false);
  });

  it('refuses variables that are not an object', () => {
    expect(check(['api'])).toEqual({
      ok: false,
      issues: [{ field: 'variables', message: 'must be an object of strings' }],
    });
  });

  it('never repeats a value in its messages (variables may hold secrets)', () => {
    const secret = 'Sup3rSecret-Value';
    const result = check({ service: secret, env: secret, x: secret });
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});

describe('expandTemplateRequest', () => {
  it('turns template + variables into the body a caller would build by hand', () => {
    const result = expandTemplateRequest(
      request({ template: 'note', variables: { title: 'Hi' }, priority: 'high' }),
      lookup,
    );
    expect(result).toEqual({
      ok: true,
      body: {
        app: 'ops',
        touser: 'zhangsan',
        priority: 'high',
        msgtype: 'markdown',
        markdown: { content: '## Hi\n' },
      },
    });
  });

  it.each([
    [
      { template: 'note', msgtype: 'text' },
      'msgtype',
      'not allowed with template: the template sets the msgtype',
    ],
    [
      { template: 'note', text: { content: 'x' } },
      'text',
      'not allowed with template: the template is the message body',
    ],
    [{ template: 'x' }, 'template', "unknown template 'x' for app 'ops'"],
    [{ template: '' }, 'template', 'must be the id of one of the app’s templates'],
    [{ template: 7 }, 'template', 'must be the id of one of the app’s templates'],
    [{ msgtype: 'text', text: { content: 'x' }, variables: {} }, 'variables', 'only allowed with template'],
  ])('refuses %j (%s)', (extra, field, message) => {
    const result = expandTemplateRequest(request(extra), lookup);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toContainEqual({ field, message });
  });

  it('answers an app without templates as an unknown template of that app', () => {
    expect(expandTemplateRequest({ app: 'billing', touser: 'u', template: 'note' }, lookup)).toEqual({
      ok: false,
      issues: [{ field: 'template', message: "unknown template 'note' for app 'billing'" }],
    });
  });

  it('leaves a body without template untouched', () => {
    const body = request({ msgtype: 'text', text: { content: 'x' } });
    expect(expandTemplateRequest(body, lookup)).toEqual({ ok: true, body });
  });
});

describe('validateMessageRequest with templates', () => {
  it('validates the rendered body with WeCom limits, as a hand-built one', () => {
    const long = validateMessageRequest(
      request({ template: 'note', variables: { title: 'x', body: '中'.repeat(700) } }),
      { templates: lookup },
    );
    expect(long).toEqual({
      ok: false,
      issues: [{ field: 'markdown.content', message: expect.stringMatching(/bytes, max 2048/) }],
    });
  });

  it("applies the app's markdownFallback to a rendered markdown message exactly as to a hand-built one", () => {
    const opts = { templates: lookup, markdownFallback: () => 'text' as const };
    const fromTemplate = validateMessageRequest(
      request({
        template: 'note',
        variables: { title: 'Disk', body: '**91%** [graph](https://g.example.com)' },
      }),
      opts,
    );
    const byHand = validateMessageRequest(
      request({
        msgtype: 'markdown',
        markdown: { content: '## Disk\n**91%** [graph](https://g.example.com)' },
      }),
      opts,
    );
    expect(fromTemplate.ok && fromTemplate.value.msgtype).toBe('text');
    expect(fromTemplate).toEqual(byHand);
  });

  it('refuses a template request when no templates are given (no app has any)', () => {
    expect(validateMessageRequest(request({ template: 'note' })).ok).toBe(false);
  });
});
