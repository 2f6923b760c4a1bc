import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const WEB = resolve(import.meta.dirname, '../../../web');
const files = (readdirSync(WEB, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
  .filter((d) => d.isFile() && /\.ts$/.test(d.name))
  .map((d) => join(d.parentPath, d.name));

// Message content is attacker-controlled: the browser apps build DOM through web/shared/dom.ts only.
it('web/ never parses strings as HTML', () => {
  expect(files.length).toBeGreaterThan(0);
  const sinks =
    /\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|createContextualFragment|\beval\(|new Function\(/;
  const offenders = files.filter((f) => sinks.test(readFileSync(f, 'utf8')));
  expect(offenders).toEqual([]);
});
