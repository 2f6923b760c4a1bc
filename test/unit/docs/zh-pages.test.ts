import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const DOCS = path.join(import.meta.dirname, '..', '..', '..', 'docs');

/** Every ```sh block of a page, without comments: what a reader runs, whatever language explains it. */
function commandsOf(page: string): string[] {
  const text = readFileSync(path.join(DOCS, page), 'utf8');
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    (m[1] ?? '').replace(/\s+#.*$/gm, '').replace(/^#.*\n/gm, ''),
  );
}

describe('the Chinese pages', () => {
  it.each([['getting-started/deploy.md', 'zh/getting-started/deploy.md']])(
    '%s and %s run the same commands',
    (en, zh) => {
      expect(commandsOf(en).length).toBeGreaterThan(0);
      expect(commandsOf(zh)).toEqual(commandsOf(en));
    },
  );
});
