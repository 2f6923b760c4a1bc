/**
 * Why a WeCom callback was rejected. Branch on `code` across module boundaries; `status` is what the callback
 * handler answers. WeCom retries any answer but 200 (path/90238), so a rejection costs at most three retries.
 * Nothing in a rejected callback may be stored.
 */
export class CallbackError extends Error {
  override readonly name: string = 'CallbackError';
  readonly code: string = 'callback_error';
  readonly status: 400 | 401 | 413 = 400;
}

/** A required query parameter (`msg_signature`, `timestamp`, `nonce`, `echostr`) is missing or malformed. */
export class CallbackRequestError extends CallbackError {
  override readonly name = 'CallbackRequestError';
  override readonly code = 'bad_request';
}

/** The body is larger than the bound; nothing was read beyond its length. */
export class CallbackBodyTooLargeError extends CallbackError {
  override readonly name = 'CallbackBodyTooLargeError';
  override readonly code = 'body_too_large';
  override readonly status = 413;
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`callback body of ${bytes} bytes exceeds ${maxBytes}`);
  }
}

/** `msg_signature` does not match sha1(sort(token, timestamp, nonce, encrypt)). */
export class CallbackSignatureError extends CallbackError {
  override readonly name = 'CallbackSignatureError';
  override readonly code = 'bad_signature';
  override readonly status = 401;
}

/** `timestamp` is outside the freshness window (a replay, or a badly wrong clock). */
export class CallbackStaleError extends CallbackError {
  override readonly name = 'CallbackStaleError';
  override readonly code = 'stale_timestamp';
  override readonly status = 401;
  constructor(
    readonly timestamp: number,
    readonly nowSeconds: number,
    readonly maxSkewSeconds: number,
  ) {
    super(`callback timestamp ${timestamp} is more than ${maxSkewSeconds} s away from now (${nowSeconds})`);
  }
}

/** The decrypted receive id is not the app's corpId: a callback meant for another corp or suite. */
export class CallbackCorpMismatchError extends CallbackError {
  override readonly name = 'CallbackCorpMismatchError';
  override readonly code = 'corp_mismatch';
  override readonly status = 401;
}

/** The ciphertext is not what WeCom's scheme produces: bad base64, length, padding or inner length field. */
export class CallbackCiphertextError extends CallbackError {
  override readonly name = 'CallbackCiphertextError';
  override readonly code = 'bad_ciphertext';
  override readonly status = 401;
}

/** The outer envelope or the decrypted message is not the XML WeCom sends (or declares a DOCTYPE). */
export class CallbackXmlError extends CallbackError {
  override readonly name = 'CallbackXmlError';
  override readonly code = 'bad_xml';
  constructor(
    message: string,
    readonly part: 'envelope' | 'message',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
