import { describe, expect, it } from 'vitest';
import { authenticate, createAuthenticator, UnauthenticatedError } from '#lib/ingest/index.js';
import { fakeConfig, OPS_KEY } from '#test/helpers/ingest-fakes.js';

describe('createAuthenticator', () => {
  const keys = fakeConfig().apiKeys;

  it('finds the key whose SHA-256 matches', () => {
    expect(createAuthenticator(keys)(`Bearer ${OPS_KEY}`).name).toBe('ops-key');
    expect(authenticate(`bearer   ${OPS_KEY}  `, keys).name).toBe('ops-key');
  });

  it.each([
    undefined,
    '',
    'Bearer',
    `Basic ${OPS_KEY}`,
    `Bearer ${OPS_KEY}x`,
    `Bearer ${OPS_KEY} extra`,
    'Bearer short',
  ])('throws UnauthenticatedError for %j', (header) => {
    expect(() => createAuthenticator(keys)(header)).toThrow(UnauthenticatedError);
  });
});
