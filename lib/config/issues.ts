import type * as v from 'valibot';

/** One problem of a config document, in the words the HTTP API uses for the same kind of mistake. */
export interface ConfigIssue {
  field: string;
  message: string;
}

/** The parts of a valibot schema object this walker reads; valibot exposes them as plain properties. */
interface SchemaNode {
  type?: string;
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
  value?: SchemaNode;
  options?: SchemaNode[];
}

/** The known keys of the strict object at `path` (record keys and array indexes are stepped over). */
function knownKeys(schema: SchemaNode, path: readonly (string | number)[]): string[] {
  let nodes: SchemaNode[] = [schema];
  const unwrap = (n: SchemaNode): SchemaNode[] => {
    if (n.wrapped) return unwrap(n.wrapped);
    if (n.options) return n.options.flatMap(unwrap);
    return [n];
  };
  for (const key of path) {
    nodes = nodes.flatMap(unwrap).flatMap((n) => {
      if (n.entries) return n.entries[String(key)] ? [n.entries[String(key)] as SchemaNode] : [];
      if (n.value && n.type === 'record') return [n.value];
      if (n.item) return [n.item];
      return [];
    });
  }
  return [...new Set(nodes.flatMap(unwrap).flatMap((n) => Object.keys(n.entries ?? {})))];
}

/** Edit distance, for "did you mean": typos are one or two edits away. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

/** The closest known key when it is close enough to be the one meant (case slips count as close). */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = name.toLowerCase() === key.toLowerCase() ? 0 : distance(key, name);
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(key.length / 3)) ? best.name : undefined;
}

/**
 * Rewrites valibot's wording for an unknown or a missing field ("Invalid key: Expected never but received
 * \"perMinut\"", "Invalid key: Expected \"apps\" but received undefined") into the words the HTTP API uses
 * (`unknown field … (did you mean …?)`, `required`); every other message is the schema's own.
 */
export function plainIssue(schema: unknown, issue: v.BaseIssue<unknown>, field: string): ConfigIssue {
  if (issue.type === 'strict_object' || issue.type === 'object') {
    const path = (issue.path ?? []).map((p) => p.key as string | number);
    const key = path[path.length - 1];
    if (issue.received === 'undefined') return { field, message: 'required' };
    if (issue.expected === 'never' && typeof key === 'string') {
      const near = closestKey(key, knownKeys(schema as SchemaNode, path.slice(0, -1)));
      return { field, message: `unknown field \`${key}\`${near ? ` (did you mean ${near}?)` : ''}` };
    }
  }
  return { field, message: issue.message };
}
