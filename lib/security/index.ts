export {
  createDigestMatcher,
  type DigestMatcher,
  secretsEqual,
  sha256Hex,
  verifyHmacSha256Hex,
} from './digest.js';
