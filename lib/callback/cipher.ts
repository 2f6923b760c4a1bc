import { createDecipheriv, timingSafeEqual } from 'node:crypto';
import { decrypt, getSignature } from '@wecom/crypto';
import { CallbackCiphertextError, CallbackCorpMismatchError, CallbackSignatureError } from './errors.js';

/** AES block size is 16, but WeCom pads to multiples of 32 (加解密方案说明, path/90968; SPEC §5). */
const PAD_BLOCK = 32;
/** random(16) ‖ msg_len(4, big-endian) ‖ msg ‖ receiveid */
const HEADER_BYTES = 20;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const SIGNATURE = /^[0-9a-f]{40}$/;

/**
 * The 32-byte AES key of an app's EncodingAESKey (43 base64 characters, as shown in WeCom's admin console).
 * @throws TypeError for anything else, so a bad config fails at start-up, not at the first callback.
 */
export function parseEncodingAESKey(encodingAESKey: string): Buffer {
  const key = /^[A-Za-z0-9+/]{43}$/.test(encodingAESKey)
    ? Buffer.from(`${encodingAESKey}=`, 'base64')
    : Buffer.alloc(0);
  if (key.length !== 32) throw new TypeError('encodingAESKey must be exactly 43 base64 characters');
  return key;
}

/**
 * Checks `msg_signature` = sha1(sort(token, timestamp, nonce, encrypt)) with the official `getSignature`, comparing
 * in constant time so the check is no oracle for the right signature.
 */
export function assertSignature(
  token: string,
  timestamp: string,
  nonce: string,
  encrypt: string,
  msgSignature: string,
): void {
  const given = msgSignature.toLowerCase();
  if (!SIGNATURE.test(given)) throw new CallbackSignatureError('msg_signature must be 40 hex characters');
  const expected = getSignature(token, timestamp, nonce, encrypt);
  if (!timingSafeEqual(Buffer.from(given, 'latin1'), Buffer.from(expected, 'latin1'))) {
    throw new CallbackSignatureError('msg_signature does not match');
  }
}

/**
 * Decrypts a signature-checked `Encrypt` (or `echostr`) with the official `@wecom/crypto` `decrypt`, then checks
 * what that function does not (it returns garbage rather than failing): the length is whole 32-byte blocks,
 * the PKCS#7 padding is strict (1..32, every pad byte equal), the inner length field fits the plaintext and the
 * text is UTF-8 (the decoded parts add up to the plaintext byte for byte), and the receive id is the corpId.
 *
 * @returns the decrypted message (inner XML, or the echostr plaintext)
 * @throws CallbackCiphertextError, CallbackCorpMismatchError
 */
export function decryptChecked(key: Buffer, encodingAESKey: string, corpId: string, encrypt: string): string {
  if (encrypt.length % 4 !== 0 || !BASE64.test(encrypt)) {
    throw new CallbackCiphertextError('ciphertext is not base64');
  }
  const ciphertext = Buffer.from(encrypt, 'base64');
  if (ciphertext.length < PAD_BLOCK || ciphertext.length % PAD_BLOCK !== 0) {
    throw new CallbackCiphertextError(`ciphertext of ${ciphertext.length} bytes is not whole 32-byte blocks`);
  }
  const pad = strictPadLength(key, ciphertext);
  let opened: { message: string; id: string };
  try {
    opened = decrypt(encodingAESKey, encrypt);
  } catch (err) {
    throw new CallbackCiphertextError('ciphertext does not decrypt', { cause: err });
  }
  // decrypt slices msg_len bytes without checking them: a length past the end leaves the receive id empty.
  if (opened.id === '') throw new CallbackCiphertextError('length field exceeds the plaintext');
  const decodedBytes = HEADER_BYTES + Buffer.byteLength(opened.message) + Buffer.byteLength(opened.id) + pad;
  if (decodedBytes !== ciphertext.length) {
    throw new CallbackCiphertextError('plaintext is not UTF-8 or its length field is inconsistent');
  }
  if (opened.id !== corpId) {
    throw new CallbackCorpMismatchError('the callback was encrypted for another corp (receive id mismatch)');
  }
  return opened.message;
}

/**
 * The pad length of the plaintext, read by decrypting only the last 32 bytes (CBC: the block before them is the
 * IV). Throws unless it is strict PKCS#7 over 32-byte blocks.
 */
function strictPadLength(key: Buffer, ciphertext: Buffer): number {
  const tailStart = ciphertext.length - PAD_BLOCK;
  const iv = tailStart === 0 ? key.subarray(0, 16) : ciphertext.subarray(tailStart - 16, tailStart);
  const decipher = createDecipheriv('aes-256-cbc', key, iv);
  decipher.setAutoPadding(false);
  const tail = Buffer.concat([decipher.update(ciphertext.subarray(tailStart)), decipher.final()]);
  const pad = tail[PAD_BLOCK - 1] ?? 0;
  if (pad < 1 || pad > PAD_BLOCK || !tail.subarray(PAD_BLOCK - pad).every((b) => b === pad)) {
    throw new CallbackCiphertextError('bad PKCS#7 padding');
  }
  if (ciphertext.length - pad < HEADER_BYTES)
    throw new CallbackCiphertextError('plaintext shorter than its header');
  return pad;
}
