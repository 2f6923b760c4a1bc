import type { ApiKeyConfig } from '#lib/config/index.js';
import { createDigestMatcher } from '#lib/security/index.js';
import { UnauthenticatedError } from './errors.js';

export { sha256Hex } from '#lib/security/index.js';

/** `Authorization: Bearer <key>`; keys are opaque tokens of 8–512 visible characters. */
const BEARER = /^Bearer[ \t]+(\S{8,512})[ \t]*$/i;

/** Finds the API key for an `Authorization` header, or throws UnauthenticatedError. */
export type Authenticator = (header: string | undefined) => ApiKeyConfig;

/**
 * Builds the authenticator once per container: the stored SHA-256 digests are decoded here, not per request, and
 * compared in constant time by the one digest matcher the gateway has (lib/security), shared with hook tokens and
 * push keys.
 *
 * @example const authenticate = createAuthenticator(config.apiKeys); const key = authenticate(headers.authorization);
 */
export function createAuthenticator(keys: readonly ApiKeyConfig[]): Authenticator {
  const match = createDigestMatcher(keys, (key) => key.sha256);
  return (header) => {
    const bearer = BEARER.exec(header ?? '');
    const found = bearer?.[1] ? match(bearer[1]) : undefined;
    if (!found) throw new UnauthenticatedError();
    return found;
  };
}

/** One-off form of {@link createAuthenticator}, for callers that authenticate a single request. */
export const authenticate = (header: string | undefined, keys: readonly ApiKeyConfig[]): ApiKeyConfig =>
  createAuthenticator(keys)(header);
