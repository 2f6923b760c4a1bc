import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Lowercase hex SHA-256, the form in which config stores API keys, hook tokens and push keys. */
export const sha256Hex = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** Finds the entry whose stored SHA-256 digest matches a presented secret, or undefined. */
export type DigestMatcher<T> = (presented: string) => T | undefined;

/**
 * Builds a matcher once per container: the stored hex digests are decoded here, not per request. The presented
 * secret is hashed and compared with every stored digest in constant time, and the loop never exits early, so
 * timing reveals neither which entry matched nor how much of one did. Comparing digests (not the secrets) also
 * makes every comparison the same length.
 *
 * @example const findPushKey = createDigestMatcher(config.pushKeys, (k) => k.sha256); findPushKey(sendkey);
 */
export function createDigestMatcher<T>(
  entries: readonly T[],
  digestOf: (entry: T) => string,
): DigestMatcher<T> {
  const stored = entries.map((entry) => ({ entry, digest: Buffer.from(digestOf(entry), 'hex') }));
  return (presented) => {
    const digest = createHash('sha256').update(presented).digest();
    let found: T | undefined;
    for (const { entry, digest: candidate } of stored) {
      if (candidate.length === digest.length && timingSafeEqual(candidate, digest) && found === undefined) {
        found = entry;
      }
    }
    return found;
  };
}

/** Constant-time equality of two secrets of any length (both are hashed first, so lengths do not leak). */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * Checks a hex HMAC-SHA256 signature (GitHub `X-Hub-Signature-256` without its `sha256=` prefix, Sentry
 * `Sentry-Hook-Signature`) over the exact bytes received — never over re-serialised JSON, which may differ in
 * whitespace or key order. Constant time; a malformed signature is simply not equal.
 *
 * @example verifyHmacSha256Hex(secret, rawBody, header.slice('sha256='.length))
 */
export function verifyHmacSha256Hex(secret: string, body: string | Buffer, presentedHex: string): boolean {
  if (!HEX_SHA256.test(presentedHex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(presentedHex, 'hex'));
}
