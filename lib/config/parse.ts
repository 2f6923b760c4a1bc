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
  const issues = result.issues.map((issue) =>
    plainIssue(GatewayConfigSchema, issue, v.getDotPath(issue) ?? '(root)'),
  );
  const lines = issues.map((i) => `  ${i.field}: ${i.message}`).join('\n');
  throw new ConfigError(`invalid ${source}:\n${lines}`, issues);
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
