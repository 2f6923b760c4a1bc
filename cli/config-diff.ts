/**
 * What a config push changes, by name only: apps and API keys added, removed or changed (with the names of the
 * fields that changed), and top-level settings. Values are never part of the diff, so printing it cannot leak
 * a WeCom secret, a callback key or a key hash.
 */
export interface NamedChange {
  name: string;
  /** Dotted paths of the fields that differ, e.g. `secret`, `quota.perMinute`. */
  fields: string[];
}

export interface SectionDiff {
  added: string[];
  removed: string[];
  changed: NamedChange[];
}

export interface ConfigDiff {
  apps: SectionDiff;
  apiKeys: SectionDiff;
  /** Inbound hooks by name and push keys by name (what `hooks create` / `push-keys create` add). */
  hooks: SectionDiff;
  pushKeys: SectionDiff;
  /** Top-level fields other than the sections above (retentionDays, …) whose value differs. */
  settings: string[];
}

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaf paths → JSON text of the value. Arrays are leaves: `apps: ["a","b"]` changes as one field. */
function flatten(value: Json, prefix = '', into = new Map<string, string>()): Map<string, string> {
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, into);
  } else {
    into.set(prefix, JSON.stringify(value));
  }
  return into;
}

export function changedFields(before: Json, after: Json): string[] {
  const a = flatten(before);
  const b = flatten(after);
  const fields = new Set<string>();
  for (const [path, v] of a) if (b.get(path) !== v) fields.add(path);
  for (const path of b.keys()) if (!a.has(path)) fields.add(path);
  return [...fields].sort();
}

function diffSection(before: Map<string, Json>, after: Map<string, Json>): SectionDiff {
  const added = [...after.keys()].filter((n) => !before.has(n));
  const removed = [...before.keys()].filter((n) => !after.has(n));
  const changed: NamedChange[] = [];
  for (const [name, next] of after) {
    if (!before.has(name)) continue;
    const fields = changedFields(before.get(name), next);
    if (fields.length > 0) changed.push({ name, fields });
  }
  return { added, removed, changed };
}

/** API keys by name; a repeated name gets ` (2)`, ` (3)`… in order, so no entry hides behind another. */
function keysByName(keys: Json): Map<string, Json> {
  const byName = new Map<string, Json>();
  for (const key of Array.isArray(keys) ? keys : []) {
    const base = isObject(key) && typeof key.name === 'string' ? key.name : '(unnamed)';
    let name = base;
    for (let n = 2; byName.has(name); n++) name = `${base} (${n})`;
    byName.set(name, key);
  }
  return byName;
}

/** Apps and hooks: entries of an object, by key. */
const appsByName = (apps: Json): Map<string, Json> => new Map(isObject(apps) ? Object.entries(apps) : []);

/**
 * Compares two config documents (best validated with the schema first, so defaults do not show as changes).
 *
 * @example diffConfigs(current, next).apps.added // ['alerts']
 */
export function diffConfigs(before: Json, after: Json): ConfigDiff {
  const b = isObject(before) ? before : {};
  const a = isObject(after) ? after : {};
  const { apps: _ba, apiKeys: _bk, hooks: _bh, pushKeys: _bp, ...bSettings } = b;
  const { apps: _aa, apiKeys: _ak, hooks: _ah, pushKeys: _ap, ...aSettings } = a;
  return {
    apps: diffSection(appsByName(b.apps), appsByName(a.apps)),
    apiKeys: diffSection(keysByName(b.apiKeys), keysByName(a.apiKeys)),
    hooks: diffSection(appsByName(b.hooks), appsByName(a.hooks)),
    pushKeys: diffSection(keysByName(b.pushKeys), keysByName(a.pushKeys)),
    settings: changedFields(bSettings, aSettings),
  };
}

export const isEmptyDiff = (d: ConfigDiff): boolean =>
  [d.apps, d.apiKeys, d.hooks, d.pushKeys].every(
    (s) => s.added.length + s.removed.length + s.changed.length === 0,
  ) && d.settings.length === 0;

/** Human lines for a diff: `+ app alerts`, `- key old-ci`, `~ app ops: secret, quota.perMinute`. */
export function describeDiff(
  d: ConfigDiff,
  c: { green(s: string): string; red(s: string): string; yellow(s: string): string },
): string[] {
  const lines: string[] = [];
  const section = (label: string, s: SectionDiff) => {
    for (const n of s.added) lines.push(c.green(`+ ${label} ${n}`));
    for (const n of s.removed) lines.push(c.red(`- ${label} ${n}`));
    for (const ch of s.changed) lines.push(c.yellow(`~ ${label} ${ch.name}: ${ch.fields.join(', ')}`));
  };
  section('app', d.apps);
  section('key', d.apiKeys);
  section('hook', d.hooks);
  section('push key', d.pushKeys);
  if (d.settings.length > 0) lines.push(c.yellow(`~ settings: ${d.settings.join(', ')}`));
  return lines;
}
