import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');

/** README.md and every page under docs/ (not the site's build output). */
function pages(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const rel = path.join(dir, name);
      if (name.startsWith('.')) continue;
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

/** The text outside fenced code blocks, where links are links. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');

const links = (markdown: string) =>
  [...prose(markdown).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);

/** Heading anchors as GitHub makes them, and as VitePress does (punctuation to `-`): a link may use either. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const [, text] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const plain = (text as string).replace(/`/g, '').trim().toLowerCase();
    out.add(plain.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
    out.add(plain.replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-').replace(/^-+|-+$/g, ''));
  }
  return out;
}

describe('links in README.md and docs/', () => {
  const all = pages();

  it('finds the pages', () => {
    expect(all).toContain('docs/quota.md');
    expect(all.length).toBeGreaterThan(10);
  });

  it.each(all)('%s links only to files and headings that exist', (page) => {
    const markdown = readFileSync(path.join(ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const link of links(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('{{')) continue;
      const [file = '', anchor] = link.split('#');
      const target = file === '' ? page : path.join(path.dirname(page), file);
      if (!existsSync(path.join(ROOT, target))) {
        broken.push(`${link} (no file ${target})`);
        continue;
      }
      if (anchor && target.endsWith('.md')) {
        const headings = anchors(readFileSync(path.join(ROOT, target), 'utf8'));
        if (!headings.has(anchor)) broken.push(`${link} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
