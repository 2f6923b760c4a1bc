import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { UnauthorizedError } from '#lib/http/index.js';

export const sha256Hex = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/**
 * Finds the API key for an `Authorization: Bearer …` header. Keys are stored as SHA-256; the digest of the
 * presented key is compared with every stored digest in constant time, and the loop never exits early, so
 * timing reveals neither which key matched nor how much of one did.
 */
export function authenticate(header: string | undefined, keys: readonly ApiKeyConfig[]): ApiKeyConfig {
  const match = /^Bearer\s+(\S{8,512})\s*$/i.exec(header ?? '');
  if (!match?.[1]) throw new UnauthorizedError();
  const presented = Buffer.from(sha256Hex(match[1]), 'hex');
  let found: ApiKeyConfig | undefined;
  for (const key of keys) {
    const stored = Buffer.from(key.sha256, 'hex');
    if (stored.length === presented.length && timingSafeEqual(stored, presented) && !found) found = key;
  }
  if (!found) throw new UnauthorizedError();
  return found;
}
