import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFields, renderConfigFields } from '../../../scripts/docs/config-fields.js';
import { CONFIG_FIELDS_PAGE } from '../../../scripts/docs-reference.js';

const CONFIGURATION = path.join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'docs',
  'reference',
  'configuration.md',
);

describe('docs/reference/config-fields.md', () => {
  it('is every field of the config schema today (run `npm run docs:reference` after changing the schema)', async () => {
    expect(await readFile(CONFIG_FIELDS_PAGE, 'utf8')).toBe(renderConfigFields());
  });

  it('reads the schema down to nested fields, with defaults and rules', () => {
    const byPath = new Map(configFields().map((f) => [f.path, f]));
    expect(byPath.get('apps.<name>.quota.perMemberPerMinute')?.rules).toEqual(['integer', '≥ 1', '≤ 30']);
    expect(byPath.get('hooks.<name>.to.touser')?.types).toEqual(['string', 'array of string or number']);
    expect(renderConfigFields()).toContain('| `retentionDays` | number | `30` |');
  });

  it('lets docs/reference/configuration.md name only fields the schema has', async () => {
    const known = new Set(configFields().map((f) => f.path.replace(/\[\]$/, '')));
    const prefixes = new Set(
      [...known].flatMap((p) => p.split('.').map((_, i, a) => a.slice(0, i + 1).join('.'))),
    );
    const named = [...(await readFile(CONFIGURATION, 'utf8')).matchAll(/^\| `([^`]+)`/gm)].map(
      (m) => m[1] as string,
    );
    expect(named.length).toBeGreaterThan(10);
    // A record's key is named for what it holds in the prose (`<id>`, `<app>`): any name is a record's key.
    expect(named.filter((p) => !prefixes.has(p.replace(/<[^>]+>/g, '<name>')))).toEqual([]);
  });
});
