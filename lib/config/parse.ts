import * as v from 'valibot';
import { ConfigError } from './errors.js';
import { plainIssue } from './issues.js';
import { type GatewayConfig, GatewayConfigSchema } from './schema.js';

/**
 * Validates a parsed config document. Throws a {@link ConfigError} whose message names every bad field.
 *
 * @example parseConfig(JSON.parse(await readFile('gateway.json', 'utf8')))
 */
export function parseConfig(input: unknown, source = 'config'): GatewayConfig {
  const result = v.safeParse(GatewayConfigSchema, input);
  if (result.success) return result.output;
  const issues = result.issues
    .flatMap(withinUnion)
    .map((issue) => plainIssue(GatewayConfigSchema, issue, v.getDotPath(issue) ?? '(root)'));
  const lines = issues.map((i) => `  ${i.field}: ${i.message}`).join('\n');
  throw new ConfigError(`invalid ${source}:\n${lines}`, issues);
}

/**
 * A union (a rule or a list of rules) that fails reports "neither"; the mistakes inside the option the value has the
 * shape of name their own fields instead. Options of another shape fail at the union's own path: those are dropped.
 */
function withinUnion(issue: v.BaseIssue<unknown>): v.BaseIssue<unknown>[] {
  if (issue.type !== 'union' || !issue.issues?.length) return [issue];
  // An option's issues carry paths from the union down: prefix the union's own.
  const inner = issue.issues
    .filter((i) => (i.path?.length ?? 0) > 0)
    .map((i) => ({ ...i, path: [...(issue.path ?? []), ...(i.path ?? [])] }) as v.BaseIssue<unknown>);
  return inner.length > 0 ? inner.flatMap(withinUnion) : [issue];
}

/** Parses JSON text then validates it; JSON syntax errors become ConfigErrors too. */
export function parseConfigJson(text: string, source = 'config'): GatewayConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${source} is not valid JSON: ${(err as Error).message}`, [], { cause: err });
  }
  return parseConfig(json, source);
}
