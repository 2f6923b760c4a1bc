import { randomBytes } from 'node:crypto';
import type { HookConfig } from '#lib/config/index.js';
import { createDigestMatcher, type DigestMatcher } from '#lib/security/index.js';

/** Finds the hook a URL names when its token matches; undefined otherwise. */
export type HookFinder = (name: string, token: string) => HookConfig | undefined;

/**
 * The token in a hook URL authenticates that hook only, like an API key: stored as SHA-256, compared in constant
 * time. Build once per container. An unknown name costs the same hashing and comparison as a known one (against a
 * random digest no token hashes to), so neither the answer nor its timing tells a wrong name from a wrong token.
 *
 * @example const findHook = createHookFinder(config.hooks ?? {}); if (!findHook('prom', token)) throw …;
 */
export function createHookFinder(hooks: Readonly<Record<string, HookConfig>>): HookFinder {
  const matchers = new Map<string, DigestMatcher<HookConfig | undefined>>(
    Object.entries(hooks).map(([name, hook]) => [name, createDigestMatcher([hook], (h) => h.tokenSha256)]),
  );
  const nobody = createDigestMatcher<HookConfig | undefined>([undefined], () =>
    randomBytes(32).toString('hex'),
  );
  return (name, token) => (matchers.get(name) ?? nobody)(token);
}
