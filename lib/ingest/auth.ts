import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { UnauthenticatedError } from './errors.js';

export const sha256Hex = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** `Authorization: Bearer <key>`; keys are opaque tokens of 8–512 visible characters. */
const BEARER = /^Bearer[ \t]+(\S{8,512})[ \t]*$/i;

/** Finds the API key for an `Authorization` header, or throws UnauthenticatedError. */
export type Authenticator = (header: string | undefined) => ApiKeyConfig;

/**
 * Builds the authenticator once per container: the stored SHA-256 digests are decoded here, not per request.
 * The digest of the presented key is compared with every stored digest in constant time and the loop never
 * exits early, so timing reveals neither which key matched nor how much of one did.
 *
 * @example const authenticate = createAuthenticator(config.apiKeys); const key = authenticate(headers.authorization);
 */
export function createAuthenticator(keys: readonly ApiKeyConfig[]): Authenticator {
  const stored = keys.map((key) => ({ key, digest: Buffer.from(key.sha256, 'hex') }));
  return (header) => {
    const match = BEARER.exec(header ?? '');
    if (!match?.[1]) throw new UnauthenticatedError();
    const presented = createHash('sha256').update(match[1]).digest();
    let found: ApiKeyConfig | undefined;
    for (const { key, digest } of stored) {
      if (digest.length === presented.length && timingSafeEqual(digest, presented) && !found) found = key;
    }
    if (!found) throw new UnauthenticatedError();
    return found;
  };
}

/** One-off form of {@link createAuthenticator}, for callers that authenticate a single request. */
export const authenticate = (header: string | undefined, keys: readonly ApiKeyConfig[]): ApiKeyConfig =>
  createAuthenticator(keys)(header);
