import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRANSITIONS } from '#lib/model/index.js';

const PAGE = path.join(import.meta.dirname, '..', '..', '..', 'docs', 'concepts', 'lifecycle.md');

/** The page's state diagram as `from --> to : name` edges, leaving out the start arrow (`[*]`). */
function diagramEdges(): string[] {
  const markdown = readFileSync(PAGE, 'utf8');
  const diagram = /^```mermaid\n([\s\S]*?)^```/m.exec(markdown)?.[1] ?? '';
  return [...diagram.matchAll(/^\s*(\w+) --> (\w+) : (\w+)\s*$/gm)].map(
    (m) => `${m[1]} --> ${m[2]} : ${m[3]}`,
  );
}

describe('docs/concepts/lifecycle.md', () => {
  it('draws exactly the status changes of lib/model/transitions.ts', () => {
    const expected = Object.entries(TRANSITIONS).flatMap(([name, t]) =>
      t.from.map((from) => `${from} --> ${t.to} : ${name}`),
    );
    expect(diagramEdges().sort()).toEqual(expected.sort());
  });
});
