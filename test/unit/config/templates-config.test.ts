import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '#lib/config/index.js';
import { MSG_TYPES } from '#lib/messages/index.js';
import { messageBody } from '#test/helpers/messages-factories.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

function withTemplates(templates: Record<string, unknown>) {
  const config = minimalConfig();
  return { ...config, apps: { ops: { ...config.apps.ops, templates } } };
}

function blamed(input: unknown): { field: string; message: string }[] {
  try {
    parseConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  throw new Error('parseConfig accepted the input');
}

const deployDone = (over: Record<string, unknown> = {}) => ({
  msgtype: 'textcard',
  textcard: {
    title: 'Deploy of {{service}} finished',
    description: '{{service}} is live on {{env}}',
    url: 'https://ci.example.com/{{service}}',
  },
  variables: {
    service: { required: true, maxBytes: 64, example: 'api' },
    env: { required: true, enum: ['prod', 'staging'] },
  },
  ...over,
});

describe('parseConfig: apps.<app>.templates', () => {
  it('accepts a template with typed variables and keeps it as written', () => {
    const config = parseConfig(withTemplates({ deploy_done: deployDone() }));
    expect(config.apps.ops?.templates?.deploy_done).toEqual(deployDone());
  });

  it.each(MSG_TYPES)('accepts a %s template (every msgtype can be one)', (msgtype) => {
    const body = messageBody(msgtype)[msgtype];
    expect(() => parseConfig(withTemplates({ t: { msgtype, [msgtype]: body } }))).not.toThrow();
  });

  it('names the leaf that uses an undeclared variable', () => {
    const template = deployDone({
      textcard: { title: '{{servce}} done', description: 'd', url: 'https://ci.example.com' },
    });
    expect(blamed(withTemplates({ deploy_done: template }))).toEqual([
      {
        field: 'apps.ops.templates.deploy_done.textcard.title',
        message: "uses undeclared variable 'servce' (declare it under variables)",
      },
    ]);
  });

  it.each([
    ['a section', '{{#env}}x{{/env}}', /\{\{#env\}\} is not a plain \{\{name\}\} tag/],
    ['a triple mustache', '{{{env}}}', /is not a plain \{\{name\}\} tag/],
    ['a partial', '{{> env}}', /is not a plain/],
    ['an unclosed tag', '{{env', /does not parse: Unclosed tag/],
    ['a dotted name', '{{env.name}}', /no dots/],
  ])('refuses %s, naming the leaf', (_what, title, message) => {
    const template = deployDone({ textcard: { title, description: 'd', url: 'https://ci.example.com' } });
    const issues = blamed(withTemplates({ deploy_done: template }));
    expect(issues).toEqual([
      { field: 'apps.ops.templates.deploy_done.textcard.title', message: expect.stringMatching(message) },
    ]);
  });

  it('refuses a pattern that does not compile', () => {
    const template = deployDone({ variables: { service: { pattern: '([a-z' }, env: {} } });
    expect(blamed(withTemplates({ deploy_done: template }))).toContainEqual({
      field: 'apps.ops.templates.deploy_done.variables.service.pattern',
      message: 'is not a valid regular expression',
    });
  });

  it('refuses an example its own variable refuses', () => {
    const template = deployDone({
      variables: { service: { maxBytes: 3, example: 'payments' }, env: { enum: ['prod'], example: 'dev' } },
    });
    expect(blamed(withTemplates({ deploy_done: template }))).toEqual([
      {
        field: 'apps.ops.templates.deploy_done.variables.service.example',
        message: 'its own rules refuse it: longer than 3 bytes (8 bytes)',
      },
      {
        field: 'apps.ops.templates.deploy_done.variables.env.example',
        message: 'its own rules refuse it: must be one of prod',
      },
    ]);
  });

  it('refuses a body that is not the declared msgtype: another msgtype’s object', () => {
    const template = { msgtype: 'markdown', text: { content: 'hi' } };
    expect(blamed(withTemplates({ t: template }))).toEqual([
      { field: 'apps.ops.templates.t.text', message: 'not allowed with msgtype markdown' },
      { field: 'apps.ops.templates.t.markdown', message: 'required: the markdown object of the message' },
    ]);
  });

  it('refuses a body that is not the declared msgtype: fields the msgtype does not have or lacks', () => {
    const template = { msgtype: 'textcard', textcard: { title: 't', content: 'wrong field' } };
    const issues = blamed(withTemplates({ t: template }));
    expect(issues.map((i) => i.field)).toEqual([
      'apps.ops.templates.t',
      'apps.ops.templates.t',
      'apps.ops.templates.t',
    ]);
    expect(issues.map((i) => i.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^textcard\.content: unknown field .*\(rendered with the variables' examples\)$/,
        ),
        expect.stringMatching(/^textcard\.description: /),
        expect.stringMatching(/^textcard\.url: /),
      ]),
    );
  });

  it('renders with the examples, so a variable in a URL field needs a URL-shaped example', () => {
    const template = {
      msgtype: 'textcard',
      textcard: { title: 't', description: 'd', url: '{{link}}' },
      variables: { link: { required: true } },
    };
    expect(blamed(withTemplates({ t: template }))).toEqual([
      {
        field: 'apps.ops.templates.t',
        message: expect.stringMatching(/^textcard\.url: .*rendered with the variables' examples/),
      },
    ]);
    const withExample = {
      ...template,
      variables: { link: { required: true, example: 'https://ci.example.com/1' } },
    };
    expect(() => parseConfig(withTemplates({ t: withExample }))).not.toThrow();
  });

  it.each([
    ['an unknown msgtype', { msgtype: 'sms', sms: {} }, 'apps.ops.templates.t.msgtype'],
    ['a bad template id', null, 'apps.ops.templates.bad id'],
    [
      'a bad variable name',
      deployDone({ variables: { 'my-var': {} } }),
      'apps.ops.templates.t.variables.my-var',
    ],
    [
      'an unknown variable rule',
      deployDone({ variables: { service: { min: 1 }, env: {} } }),
      'apps.ops.templates.t.variables.service.min',
    ],
    ['a non-object body', { msgtype: 'text', text: 'hello' }, 'apps.ops.templates.t.text'],
  ])('refuses %s', (_what, template, field) => {
    const templates = template === null ? { 'bad id': deployDone() } : { t: template };
    expect(blamed(withTemplates(templates)).map((i) => i.field)).toContain(field);
  });
});

describe('parseConfig: hooks and push keys that name an app template', () => {
  const hook = (appTemplate: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    source: 'generic',
    app: 'ops',
    to: { touser: 'u' },
    tokenSha256: 'b'.repeat(64),
    appTemplate,
    ...extra,
  });
  const pushKey = (template: string) => ({
    name: 'cron',
    sha256: 'c'.repeat(64),
    app: 'ops',
    to: { touser: 'u' },
    template,
  });

  it('accepts a hook and a push key naming templates of their app', () => {
    const config = {
      ...withTemplates({ deploy_done: deployDone() }),
      hooks: { ci: hook({ id: 'deploy_done', variables: { service: '{{repo.name}}', env: 'prod' } }) },
      pushKeys: [pushKey('deploy_done')],
    };
    expect(parseConfig(config).hooks?.ci?.appTemplate?.id).toBe('deploy_done');
  });

  it('names a template the app does not have, a mapping that does not parse, and a clash with template', () => {
    const config = {
      ...withTemplates({ deploy_done: deployDone() }),
      hooks: {
        a: hook({ id: 'nope' }),
        b: hook({ id: 'deploy_done', variables: { service: '{{#repo}}' } }),
        c: hook({ id: 'deploy_done' }, { template: '{{x}}' }),
      },
      pushKeys: [pushKey('nope')],
    };
    expect(blamed(config)).toEqual([
      { field: 'hooks.b.appTemplate.variables.service', message: expect.stringMatching(/^does not parse/) },
      {
        field: 'hooks.c.appTemplate',
        message: 'appTemplate decides the message: give appTemplate, or template/msgtype, not both',
      },
      { field: 'hooks.a.appTemplate.id', message: 'app "ops" has no template "nope"' },
      { field: 'pushKeys.0.template', message: 'app "ops" has no template "nope"' },
    ]);
  });
});
