import type { HookConfig } from '#lib/config/index.js';
import { createDigestMatcher } from '#lib/security/index.js';

/**
 * The token in a hook URL authenticates that hook only, like an API key: stored as SHA-256, compared in constant
 * time. Returns the hook when both the name and the token match; callers answer 401 otherwise without saying
 * which part was wrong.
 *
 * @example const hook = findHook(config.hooks ?? {}, 'prom', token); if (!hook) throw new UnauthorizedError('…');
 */
export function findHook(
  hooks: Readonly<Record<string, HookConfig>>,
  name: string,
  token: string,
): HookConfig | undefined {
  const hook = Object.hasOwn(hooks, name) ? hooks[name] : undefined;
  if (!hook) return undefined;
  return createDigestMatcher([hook], (h) => h.tokenSha256)(token);
}
