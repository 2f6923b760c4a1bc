import { describe, expect, it } from 'vitest';
import { createDigestMatcher, secretsEqual, sha256Hex, verifyHmacSha256Hex } from '#lib/security/index.js';

describe('verifyHmacSha256Hex', () => {
  // The test vector of GitHub's "Validating webhook deliveries" page.
  const SECRET = "It's a Secret to Everybody";
  const SIGNATURE = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it("accepts GitHub's documented example signature", () => {
    expect(verifyHmacSha256Hex(SECRET, 'Hello, World!', SIGNATURE)).toBe(true);
    expect(verifyHmacSha256Hex(SECRET, Buffer.from('Hello, World!'), SIGNATURE.toUpperCase())).toBe(true);
  });

  it('rejects a changed body, a changed secret, a truncated or non-hex signature', () => {
    expect(verifyHmacSha256Hex(SECRET, 'Hello, World?', SIGNATURE)).toBe(false);
    expect(verifyHmacSha256Hex('another secret', 'Hello, World!', SIGNATURE)).toBe(false);
    expect(verifyHmacSha256Hex(SECRET, 'Hello, World!', SIGNATURE.slice(0, 40))).toBe(false);
    expect(verifyHmacSha256Hex(SECRET, 'Hello, World!', `${SIGNATURE.slice(0, 63)}z`)).toBe(false);
    expect(verifyHmacSha256Hex(SECRET, 'Hello, World!', '')).toBe(false);
  });
});

describe('createDigestMatcher', () => {
  const keys = [
    { name: 'cron', sha256: sha256Hex('sendkey-cron-0001') },
    { name: 'backup', sha256: sha256Hex('sendkey-backup-02') },
  ];

  it('finds the entry whose digest matches the presented secret', () => {
    const find = createDigestMatcher(keys, (k) => k.sha256);

    expect(find('sendkey-backup-02')?.name).toBe('backup');
    expect(find('sendkey-cron-0001')?.name).toBe('cron');
  });

  it('finds nothing for a wrong secret, the digest itself, or an empty string', () => {
    const find = createDigestMatcher(keys, (k) => k.sha256);

    expect(find('sendkey-backup-03')).toBeUndefined();
    expect(find(keys[0]?.sha256 ?? '')).toBeUndefined();
    expect(find('')).toBeUndefined();
  });
});

describe('secretsEqual', () => {
  it('compares secrets of any length', () => {
    expect(secretsEqual('gitlab-secret-token', 'gitlab-secret-token')).toBe(true);
    expect(secretsEqual('gitlab-secret-token', 'gitlab-secret-toke')).toBe(false);
    expect(secretsEqual('', 'x')).toBe(false);
  });
});
