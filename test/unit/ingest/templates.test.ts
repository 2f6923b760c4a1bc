import { describe, expect, it } from 'vitest';
import { type ApiKeyConfig, type GatewayConfig, parseConfig } from '#lib/config/index.js';
import { AccessDeniedError, type IngestDeps, listTemplates } from '#lib/ingest/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

/** Only the config is read: the other ports stay out of the test. */
function depsWith(config: GatewayConfig): IngestDeps {
  return { config } as IngestDeps;
}

const template = { msgtype: 'text', text: { content: '{{a}}' }, variables: { a: { maxBytes: 9 } } };

describe('listTemplates', () => {
  const base = minimalConfig();
  const config = parseConfig({
    ...base,
    apps: {
      ops: { ...base.apps.ops, templates: { zeta: template, alpha: { ...template, description: 'first' } } },
      billing: { ...base.apps.ops, templates: { invoice: template } },
    },
  });
  const key = config.apiKeys[0] as ApiKeyConfig;

  it("lists the key's apps' templates by id, with required defaulted and without bodies", () => {
    const { templates } = listTemplates(depsWith(config), key, { app: 'ops' });

    expect(templates).toEqual([
      {
        app: 'ops',
        id: 'alpha',
        msgtype: 'text',
        description: 'first',
        variables: { a: { maxBytes: 9, required: false } },
      },
      {
        app: 'ops',
        id: 'zeta',
        msgtype: 'text',
        description: null,
        variables: { a: { maxBytes: 9, required: false } },
      },
    ]);
  });

  it('reads an empty app as no filter, and never lists apps the key may not use', () => {
    const ids = (query: Record<string, string>) =>
      listTemplates(depsWith(config), key, query).templates.map((t) => `${t.app}/${t.id}`);
    expect(ids({ app: '' })).toEqual(['ops/alpha', 'ops/zeta']);
    expect(ids({})).toEqual(['ops/alpha', 'ops/zeta']);
  });

  it('refuses an app the key may not use, and one that does not exist, the same way', () => {
    expect(() => listTemplates(depsWith(config), key, { app: 'billing' })).toThrow(AccessDeniedError);
    expect(() => listTemplates(depsWith(config), key, { app: 'nope' })).toThrow(AccessDeniedError);
  });
});
