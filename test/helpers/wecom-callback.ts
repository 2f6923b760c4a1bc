import { createCipheriv, randomBytes } from 'node:crypto';
import { encrypt, getSignature } from '@wecom/crypto';
import type { CallbackCredentials, CallbackQuery } from '#lib/callback/index.js';

/** A made-up app (not one of the published vectors), so tests also run on keys nobody published. */
export const TEST_APP: CallbackCredentials = {
  token: 'Vz3kqT9bLmXr',
  encodingAESKey: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
  corpId: 'ww1a2b3c4d5e6f7a8b',
};

/** Official vectors (WeCom's WXBizMsgCrypt sample; design/wecom-api-notes.md §5.2 (a) and (b), TOOLCHAIN.md). */
export const OFFICIAL = {
  app: {
    token: 'QDG6eK',
    encodingAESKey: 'jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C',
    corpId: 'wx5823bf96d3bd56c7',
  },
  verify: {
    query: {
      msg_signature: '5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3',
      timestamp: '1409659589',
      nonce: '263014780',
      echostr: 'P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ==',
    },
    plaintext: '1616140317555161061',
  },
  post: {
    query: {
      msg_signature: '477715d11cdb4164915debcba66cb864d751f3e6',
      timestamp: '1409659813',
      nonce: '1372623149',
    },
    encrypt:
      'RypEvHKD8QQKFhvQ6QleEB4J58tiPdvo+rtK1I9qca6aM/wvqnLSV5zEPeusUiX5L5X/0lWfrf0QADHHhGd3QczcdCUpj911L3vg3W/sYYvuJTs3TUUkSUXxaccAS0qhxchrRYt66wiSpGLYL42aM6A8dTT+6k4aSknmPj48kzJs8qLjvd4Xgpue06DOdnLxAUHzM6+kDZ+HMZfJYuR+LtwGc2hgf5gsijff0ekUNXZiqATP7PF5mZxZ3Izoun1s4zG4LUMnvw2r+KqCKIw+3IQH03v+BCA9nMELNqbSf6tiWSrXJB3LAVGUcallcrw8V2t9EL4EhzJWrQUax5wLVMNS0+rUPA3k22Ncx4XXZS9o0MBH27Bo6BpNelZpS+/uh9KsNlY6bHCmJU9p8g7m3fVKn28H3KDYA5Pl/T8Z1ptDAVe0lXdQ2YoyyH2uyPIGHBZZIs2pDBS8R07+qN+E7Q==',
  },
};

/** go-workwx vectors, made with WeCom's official test tool (wecom-api-notes.md §5.2 (c) and (d)). */
export const GO_WORKWX = {
  verify: {
    app: {
      token: 'kjr2TKI8umCBfVF3wAHk8JiPwma5VBme',
      encodingAESKey: '4Ma3YBrSBbX2aez8MJpXGBne5LSDwgGqHbhM9WPYIws',
      corpId: 'ww6a112864f8022910',
    },
    query: {
      msg_signature: '1ba3cb09c0d2c2b3ed6900d37f91a6efae6cb011',
      timestamp: '1583940690',
      nonce: 'VHh7ymSeb0jc4lSb',
      echostr: '6KmUQuPVu7UhjyVqRdbo5SfcRqaHvbUlKSHFvBV2ZuR6TIlKsygcfeSd1GDplg1C5KSKr6UPHCaC/nIX3ZNt9w==',
    },
    plaintext: '94966531020182955848408',
  },
  post: {
    app: {
      token: 'kz7Yx62CH8SaLN',
      encodingAESKey: 'cD0d7jx4tYvVtzqrmh3Dm3QFCXe6f8SlHoMtMh3qQEP',
      corpId: 'ww6a112864f8022910',
    },
    query: {
      msg_signature: 'f265ae551b1932727204c3d707628d01376a6940',
      timestamp: '1583995625',
      nonce: '1584392382',
    },
    body: '<xml><ToUserName><![CDATA[ww6a112864f8022910]]></ToUserName><Encrypt><![CDATA[EUCt7xMcNiyASzZj0Hjc5yDjFQrCum6AfQ3ntHiUzjGQ51xieKmbvtrZ40/EcB2W/W8yH0n4Lqx48gJl/T9HD/R309I0P/r5pIZucK3lyEn48FYMr4YdE0QdL2jIJ3xkcXUr6uzefzCxG6lMvwpAJaOyVCzN7sRRw47njfxy5EIqU6R9ZBhlTzfdnhhOhK/nTwzrZX3SoGlXFA9OBeZ6ru1NWpXFk76x9DUMe0lcxPPiUqK8ctnQcYXSGUHVqC6DfG7E7mab0OmruNN8cBZY5d3dYOBA4OgaH55Q0AJmUpdT8vNiXpXx+6TxT3TIjySXpDrHVyrsb772aYywgg/Nu4kUmGkALwFZlzhjNegR7wDwb9lr4ERXsSSS8JZ8lbBmaQ3F2Tq584xoPj5rIhXAF734ynm4no1g+SdHiNqR328=]]></Encrypt><AgentID><![CDATA[1000002]]></AgentID></xml>',
  },
};

/** WeCom's outer POST body around an `Encrypt` value. */
export const envelope = (encryptValue: string, corpId = TEST_APP.corpId, agentId = '1000002'): string =>
  `<xml><ToUserName><![CDATA[${corpId}]]></ToUserName><Encrypt><![CDATA[${encryptValue}]]></Encrypt>` +
  `<AgentID><![CDATA[${agentId}]]></AgentID></xml>`;

/**
 * Inner XML the way WeCom writes it: strings in CDATA, numbers bare. Nested values are passed as raw XML with
 * {@link raw}.
 */
export function wecomXml(fields: Record<string, string | number | { raw: string }>): string {
  const body = Object.entries(fields)
    .map(([name, value]) => {
      if (typeof value === 'number') return `<${name}>${value}</${name}>`;
      if (typeof value === 'object') return `<${name}>${value.raw}</${name}>`;
      return `<${name}><![CDATA[${value}]]></${name}>`;
    })
    .join('');
  return `<xml>${body}</xml>`;
}
export const raw = (xml: string) => ({ raw: xml });

export interface Sealed {
  query: CallbackQuery;
  body: string;
  encrypt: string;
}

/** A callback POST exactly as WeCom builds it: `@wecom/crypto` encrypt with the corpId, then getSignature. */
export function sealCallback(
  app: CallbackCredentials,
  xml: string,
  opts: { timestamp: number; nonce?: string; encrypt?: string },
): Sealed {
  const encrypted = opts.encrypt ?? encrypt(app.encodingAESKey, xml, app.corpId);
  const timestamp = String(opts.timestamp);
  const nonce = opts.nonce ?? randomBytes(6).toString('hex');
  return {
    query: { msg_signature: getSignature(app.token, timestamp, nonce, encrypted), timestamp, nonce },
    body: envelope(encrypted, app.corpId),
    encrypt: encrypted,
  };
}

/** A URL-verification GET query for `plaintext`, as WeCom sends it when an admin saves the callback URL. */
export function sealEchostr(app: CallbackCredentials, plaintext: string, timestamp: number): CallbackQuery {
  const echostr = encrypt(app.encodingAESKey, plaintext, app.corpId);
  const ts = String(timestamp);
  const nonce = '839201';
  return { msg_signature: getSignature(app.token, ts, nonce, echostr), timestamp: ts, nonce, echostr };
}

/**
 * AES-256-CBC over a hand-built plaintext with hand-built padding: ciphertexts WeCom would never produce, to
 * test what `@wecom/crypto` decrypt lets through.
 */
export function encryptRaw(encodingAESKey: string, plaintext: Buffer): string {
  const key = Buffer.from(`${encodingAESKey}=`, 'base64');
  const cipher = createCipheriv('aes-256-cbc', key, key.subarray(0, 16));
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(plaintext), cipher.final()]).toString('base64');
}

/** random(16) ‖ length(4) ‖ message ‖ receive id, unpadded; `length` defaults to the message's byte length. */
export function plaintextOf(message: Buffer | string, receiveId: string, length?: number): Buffer {
  const msg = Buffer.isBuffer(message) ? message : Buffer.from(message);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(length ?? msg.length);
  return Buffer.concat([Buffer.alloc(16, 7), len, msg, Buffer.from(receiveId)]);
}

/** Pads to a multiple of 32 with `n` copies of `n` (strict PKCS#7), then lets `tamper` change the result. */
export function pad32(data: Buffer, tamper?: (padded: Buffer, n: number) => void): Buffer {
  const n = 32 - (data.length % 32);
  const padded = Buffer.concat([data, Buffer.alloc(n, n)]);
  tamper?.(padded, n);
  return padded;
}

/** A signed callback around any `Encrypt` value (the signature is valid, so decryption is what gets tested). */
export const signedAround = (app: CallbackCredentials, encryptValue: string, timestamp: number): Sealed =>
  sealCallback(app, '', { timestamp, encrypt: encryptValue });
