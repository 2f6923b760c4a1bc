import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_DEFAULTS, SETTING_KEYS } from '../../infra/context.js';

const DEPLOY = path.join(import.meta.dirname, '..', '..', 'docs', 'getting-started', 'deploy.md');

/** The deploy page's settings table: `| `a` / `b` | default / default | meaning |` rows, by setting. */
function documented(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, names, defaults] of readFileSync(DEPLOY, 'utf8').matchAll(/^\| (`[^|]+) \| ([^|]+) \|/gm)) {
    const keys = [...(names as string).matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const values = (defaults as string).split(' / ').map((d) => d.trim().replace(/`/g, ''));
    keys.forEach((k, i) => {
      out.set(k, values[i] ?? values[0] ?? '');
    });
  }
  return out;
}

describe('docs/getting-started/deploy.md, settings per stage', () => {
  it('documents every setting a stage entry may have, and only those', () => {
    const table = documented();
    expect([...SETTING_KEYS].filter((k) => !table.has(k))).toEqual([]);
  });

  it('gives each setting the default the stack uses', () => {
    const table = documented();
    for (const key of SETTING_KEYS) {
      const fallback = (CONTEXT_DEFAULTS as Record<string, unknown>)[key];
      if (typeof fallback === 'number' || (typeof fallback === 'string' && fallback !== ''))
        expect(table.get(key), key).toBe(String(fallback));
    }
  });
});
