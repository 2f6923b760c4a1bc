import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../infra/constructs/esbuild-options.js';

/** The feature flags and defaults from cdk.json, so tests synthesize what `cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}
