import { assertSignature, decryptChecked, parseEncodingAESKey } from './cipher.js';
import {
  CallbackBodyTooLargeError,
  CallbackRequestError,
  CallbackSignatureError,
  CallbackStaleError,
  CallbackXmlError,
} from './errors.js';
import type { CallbackEvent } from './events.js';
import { parseCallbackMessage } from './parse.js';
import { assertNoDeclarations, countOpenTags, elementText } from './xml-guard.js';

/** An app's callback settings from WeCom's admin console (应用管理 › 接收消息 › API接收). */
export interface CallbackCredentials {
  token: string;
  /** 43 base64 characters. */
  encodingAESKey: string;
  /** The receive id every callback must carry: the corp's id for a self-built app (自建应用). */
  corpId: string;
}

export interface CallbackVerifierOptions {
  /**
   * How far `timestamp` may be from now, either way. Default 300 s: WeCom answers a timeout with three retries
   * seconds apart (path/90238), so 5 minutes covers them plus clock skew; inside the window the event's dedupe
   * key, not the timestamp, stops a replay from being stored twice.
   */
  maxSkewSeconds?: number;
  /**
   * Largest POST body read. Default 64 KiB: WeCom's biggest callbacks (contact changes with extended attributes)
   * are a few KiB; a text message is at most 2048 bytes of content.
   */
  maxBodyBytes?: number;
  /** Milliseconds since the epoch; injected by tests (the official vectors are from 2014). */
  now?: () => number;
}

/** The query string WeCom adds to the callback URL (already URL-decoded). */
export interface CallbackQuery {
  msg_signature?: string | undefined;
  timestamp?: string | undefined;
  nonce?: string | undefined;
  echostr?: string | undefined;
}

export interface CallbackVerifier {
  /**
   * URL verification (`GET`, when an admin saves the callback URL): checks the signature over `echostr`,
   * decrypts it and returns the plaintext to answer as the bare response body (no quotes, BOM or newline).
   */
  verifyUrl(query: CallbackQuery): string;
  /** A `POST`: every check, then the decrypted inner XML — authenticated, not yet parsed. */
  open(query: CallbackQuery, body: string | Uint8Array): string;
  /** {@link open} plus {@link parseCallbackMessage}: the normalised event. */
  receive(query: CallbackQuery, body: string | Uint8Array): CallbackEvent;
}

const DEFAULT_MAX_SKEW_SECONDS = 300;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const MAX_NONCE_LENGTH = 128;

/**
 * Verifies WeCom callbacks for one app. Order of checks on a POST, cheapest and least trusting first: body size,
 * query parameters, timestamp freshness, extraction of `Encrypt` from the outer envelope (a linear scan, no
 * parser, no DOCTYPE), `msg_signature` (constant time), decryption with strict checks, and only then the XML
 * parser on the authenticated plaintext. Throws a {@link CallbackError} subclass whose `status` the handler
 * answers.
 *
 * @example
 * const verifier = createCallbackVerifier({ token, encodingAESKey, corpId });
 * const event = verifier.receive(apiEvent.queryStringParameters ?? {}, body); // CallbackSignatureError → 401
 */
export function createCallbackVerifier(
  creds: CallbackCredentials,
  opts: CallbackVerifierOptions = {},
): CallbackVerifier {
  const key = parseEncodingAESKey(creds.encodingAESKey);
  if (creds.token === '' || creds.corpId === '') throw new TypeError('token and corpId must not be empty');
  const maxSkew = opts.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS;
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const now = opts.now ?? Date.now;

  /** Query parameters present and well-formed, timestamp fresh: all before the body is looked at. */
  const preflight = (query: CallbackQuery) => {
    const checked = checkedQuery(query);
    assertFresh(Number(checked.timestamp), Math.floor(now() / 1000), maxSkew);
    return checked;
  };
  const unseal = (checked: CheckedQuery, encrypt: string): string => {
    assertSignature(creds.token, checked.timestamp, checked.nonce, encrypt, checked.msgSignature);
    return decryptChecked(key, creds.encodingAESKey, creds.corpId, encrypt);
  };

  const open = (query: CallbackQuery, body: string | Uint8Array): string => {
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (bytes > maxBodyBytes) throw new CallbackBodyTooLargeError(bytes, maxBodyBytes);
    const checked = preflight(query);
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    return unseal(checked, extractEncrypt(text));
  };

  return {
    verifyUrl(query) {
      const checked = preflight(query);
      if (!query.echostr) throw new CallbackRequestError('echostr is required');
      // echostr is base64, which has no spaces: a '+' that a form decoder turned into ' ' is put back.
      return unseal(checked, query.echostr.replaceAll(' ', '+'));
    },
    open,
    receive: (query, body) => parseCallbackMessage(open(query, body)),
  };
}

interface CheckedQuery {
  msgSignature: string;
  timestamp: string;
  nonce: string;
}

function checkedQuery(query: CallbackQuery): CheckedQuery {
  const { msg_signature: msgSignature, timestamp, nonce } = query;
  if (!msgSignature) throw new CallbackSignatureError('msg_signature is required');
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) {
    throw new CallbackRequestError('timestamp must be Unix seconds');
  }
  if (!nonce || nonce.length > MAX_NONCE_LENGTH) {
    throw new CallbackRequestError(`nonce must be 1-${MAX_NONCE_LENGTH} characters`);
  }
  return { msgSignature, timestamp, nonce };
}

function assertFresh(timestamp: number, nowSeconds: number, maxSkew: number): void {
  if (Math.abs(nowSeconds - timestamp) > maxSkew)
    throw new CallbackStaleError(timestamp, nowSeconds, maxSkew);
}

/**
 * The `Encrypt` value of WeCom's outer envelope `<xml><ToUserName/><Encrypt/><AgentID/></xml>`. Only `Encrypt` is
 * signed, so the other two are ignored (the decrypted message carries both, authenticated). Linear string scans
 * on a size-bounded body: no parser, no entity expansion, no regular-expression backtracking.
 */
export function extractEncrypt(body: string): string {
  assertNoDeclarations(body, 'envelope');
  const doc = body.trim();
  const root = doc.startsWith('<?xml') ? doc.slice(doc.indexOf('?>') + 2).trimStart() : doc;
  if (!root.startsWith('<xml>') || !root.endsWith('</xml>')) {
    throw new CallbackXmlError('body is not a WeCom callback envelope (<xml>…</xml>)', 'envelope');
  }
  const encrypt = countOpenTags(root, 'Encrypt') === 1 ? elementText(root, 'Encrypt') : undefined;
  if (encrypt === undefined || encrypt === '') {
    throw new CallbackXmlError('the envelope must hold exactly one non-empty <Encrypt> element', 'envelope');
  }
  return encrypt;
}
