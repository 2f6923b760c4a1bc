import { decrypt, encrypt, getSignature } from '@wecom/crypto';
import { describe, expect, it } from 'vitest';
import {
  CallbackBodyTooLargeError,
  CallbackCiphertextError,
  CallbackCorpMismatchError,
  CallbackError,
  CallbackRequestError,
  CallbackSignatureError,
  CallbackStaleError,
  CallbackXmlError,
  createCallbackVerifier,
} from '#lib/callback/index.js';
import { buildCallbackRequest } from '#local/wecom-sim/index.js';
import {
  encryptRaw,
  envelope,
  GO_WORKWX,
  OFFICIAL,
  pad32,
  plaintextOf,
  raw,
  sealCallback,
  sealEchostr,
  signedAround,
  TEST_APP,
  wecomXml,
} from '#test/helpers/wecom-callback.js';

const NOW_S = 1_790_000_000;
const verifier = (opts: { now?: number; maxBodyBytes?: number } = {}) =>
  createCallbackVerifier(TEST_APP, {
    now: () => (opts.now ?? NOW_S) * 1000,
    ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}),
  });
const TEXT = wecomXml({
  ToUserName: TEST_APP.corpId,
  FromUserName: 'alice',
  CreateTime: NOW_S,
  MsgType: 'text',
  Content: 'hi',
  MsgId: raw('4561255354251345929'),
  AgentID: 1000002,
});

/** Runs `fn`, expecting it to throw; returns the error. */
function thrown(fn: () => unknown): CallbackError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CallbackError);
    return err as CallbackError;
  }
  return expect.fail('expected a CallbackError');
}

describe('createCallbackVerifier › published vectors', () => {
  it('answers the official URL verification with the plaintext echostr', () => {
    const v = createCallbackVerifier(OFFICIAL.app, { now: () => 1409659589_000 });
    expect(v.verifyUrl(OFFICIAL.verify.query)).toBe(OFFICIAL.verify.plaintext);
  });

  it('opens the official POST message: text "hello" with its 64-bit MsgId intact', () => {
    const v = createCallbackVerifier(OFFICIAL.app, { now: () => 1409659813_000 });
    const event = v.receive(OFFICIAL.post.query, envelope(OFFICIAL.post.encrypt, OFFICIAL.app.corpId, '218'));
    expect(event).toEqual({
      kind: 'text',
      corpId: 'wx5823bf96d3bd56c7',
      from: 'mycreate',
      createTime: 1409659813,
      agentId: '218',
      msgId: '4561255354251345929', // as a number it would read 4561255354251346000
      content: 'hello',
    });
  });

  it('accepts the go-workwx vectors made with WeCom’s test tool, and refuses the one-digit-off signature', () => {
    const { app, query, plaintext } = GO_WORKWX.verify;
    const v = createCallbackVerifier(app, { now: () => 1583940690_000 });
    expect(v.verifyUrl(query)).toBe(plaintext);
    const forged = { ...query, msg_signature: query.msg_signature.replace(/1$/, '0') };
    expect(thrown(() => v.verifyUrl(forged))).toBeInstanceOf(CallbackSignatureError);

    const post = GO_WORKWX.post;
    const p = createCallbackVerifier(post.app, { now: () => 1583995625_000 });
    expect(p.receive(post.query, post.body)).toMatchObject({
      kind: 'text',
      content: 'x123',
      msgId: '2018405441',
    });
  });

  it('takes back a "+" that a form decoder turned into a space in echostr', () => {
    const v = createCallbackVerifier(OFFICIAL.app, { now: () => 1409659589_000 });
    const echostr = OFFICIAL.verify.query.echostr.replaceAll('+', ' ');
    expect(v.verifyUrl({ ...OFFICIAL.verify.query, echostr })).toBe(OFFICIAL.verify.plaintext);
  });

  it('accepts what the local WeCom simulator sends (the wiring pass uses it)', () => {
    const { url, body } = buildCallbackRequest(
      { url: 'http://127.0.0.1:1/v1/wecom/callback/ops', ...TEST_APP, xml: TEXT },
      NOW_S * 1000,
    );
    const params = new URL(url).searchParams;
    const query = Object.fromEntries(params.entries());
    expect(verifier().receive(query, body)).toMatchObject({ kind: 'text', content: 'hi' });
  });
});

describe('createCallbackVerifier › signature and freshness', () => {
  it('refuses a forged signature with 401, before decrypting (garbage ciphertext still says bad_signature)', () => {
    const sealed = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    const forged = {
      ...sealed.query,
      msg_signature: getSignature('not-the-token', NOW_S, 'n', sealed.encrypt),
    };
    const err = thrown(() => verifier().receive(forged, sealed.body));
    expect(err).toBeInstanceOf(CallbackSignatureError);
    expect([err.code, err.status]).toEqual(['bad_signature', 401]);

    const garbage = thrown(() => verifier().receive(forged, envelope('@@not base64@@')));
    expect(garbage.code).toBe('bad_signature');
  });

  it('refuses a signature over a different Encrypt (the body was swapped)', () => {
    const a = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S, nonce: 'n1' });
    const b = sealCallback(TEST_APP, TEXT.replace('hi', 'evil'), { timestamp: NOW_S, nonce: 'n1' });
    expect(thrown(() => verifier().receive(a.query, b.body))).toBeInstanceOf(CallbackSignatureError);
  });

  it('refuses a missing or malformed msg_signature with 401', () => {
    const { query, body } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    expect(thrown(() => verifier().receive({ ...query, msg_signature: undefined }, body)).status).toBe(401);
    expect(thrown(() => verifier().receive({ ...query, msg_signature: 'zz' }, body)).code).toBe(
      'bad_signature',
    );
  });

  it('accepts a timestamp up to 300 s away either way and refuses 301 s as stale (401)', () => {
    for (const skew of [-300, 0, 300]) {
      const { query, body } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S + skew });
      expect(verifier().receive(query, body).kind).toBe('text');
    }
    for (const skew of [-301, 301]) {
      const { query, body } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S + skew });
      const err = thrown(() => verifier().receive(query, body));
      expect(err).toBeInstanceOf(CallbackStaleError);
      expect([err.code, err.status]).toEqual(['stale_timestamp', 401]);
    }
  });

  it('checks freshness before it looks at the body (a stale request with a junk body is stale, not bad XML)', () => {
    const { query } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S - 3600 });
    expect(thrown(() => verifier().receive(query, 'junk')).code).toBe('stale_timestamp');
  });

  it('refuses a replayed URL verification from an hour ago', () => {
    const query = sealEchostr(TEST_APP, '123', NOW_S - 3600);
    expect(thrown(() => verifier().verifyUrl(query))).toBeInstanceOf(CallbackStaleError);
    expect(verifier().verifyUrl(sealEchostr(TEST_APP, '123', NOW_S))).toBe('123');
  });

  it.each([
    [{ timestamp: undefined }, 'timestamp'],
    [{ timestamp: '17e8' }, 'timestamp'],
    [{ nonce: '' }, 'nonce'],
    [{ nonce: 'x'.repeat(129) }, 'nonce'],
  ])('answers 400 for bad query parameters %j', (patch, what) => {
    const { query, body } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    const err = thrown(() => verifier().receive({ ...query, ...patch }, body));
    expect(err).toBeInstanceOf(CallbackRequestError);
    expect(err.status).toBe(400);
    expect(err.message).toContain(what);
  });

  it('answers 400 for a URL verification without echostr', () => {
    const { echostr: _omitted, ...query } = sealEchostr(TEST_APP, '1', NOW_S);
    expect(thrown(() => verifier().verifyUrl(query))).toBeInstanceOf(CallbackRequestError);
  });
});

describe('createCallbackVerifier › decryption checks @wecom/crypto leaves out', () => {
  const sealRaw = (plaintext: Buffer) =>
    signedAround(TEST_APP, encryptRaw(TEST_APP.encodingAESKey, plaintext), NOW_S);

  it('refuses a callback encrypted for another corp (receive id mismatch) with 401', () => {
    const v = createCallbackVerifier(
      { ...OFFICIAL.app, corpId: 'ww-other-corp' },
      { now: () => 1409659813_000 },
    );
    const err = thrown(() => v.receive(OFFICIAL.post.query, envelope(OFFICIAL.post.encrypt)));
    expect(err).toBeInstanceOf(CallbackCorpMismatchError);
    expect([err.code, err.status]).toEqual(['corp_mismatch', 401]);
  });

  it.each([
    ['not base64', '!!!!'],
    ['a length that is not whole 32-byte blocks', Buffer.alloc(48, 1).toString('base64')],
    ['unpadded base64', Buffer.alloc(64, 1).toString('base64').replace(/=+$/, 'A')],
  ])('refuses a signed ciphertext that is %s', (_what, value) => {
    const { query, body } = signedAround(TEST_APP, value, NOW_S);
    const err = thrown(() => verifier().receive(query, body));
    expect(err).toBeInstanceOf(CallbackCiphertextError);
    expect(err.status).toBe(401);
  });

  it.each([
    ['pad byte 0', (p: Buffer) => p.writeUInt8(0, p.length - 1)],
    ['pad byte 33', (p: Buffer) => p.writeUInt8(33, p.length - 1)],
    ['pad bytes that disagree', (p: Buffer, n: number) => p.writeUInt8(n + 1, p.length - n)],
  ])('refuses bad PKCS#7 padding (%s) that @wecom/crypto decrypt would let through', (_what, tamper) => {
    const plaintext = pad32(plaintextOf(TEXT, TEST_APP.corpId), tamper);
    const sealed = sealRaw(plaintext);
    expect(() => decrypt(TEST_APP.encodingAESKey, sealed.encrypt)).not.toThrow();
    expect(thrown(() => verifier().receive(sealed.query, sealed.body))).toBeInstanceOf(
      CallbackCiphertextError,
    );
  });

  it('accepts every legal pad length 1..32 (messages of every length mod 32)', () => {
    for (let extra = 0; extra < 32; extra++) {
      const xml = wecomXml({
        FromUserName: 'a'.repeat(extra),
        CreateTime: NOW_S,
        MsgType: 'event',
        Event: 'x',
      });
      const { query, body } = sealRaw(pad32(plaintextOf(xml, TEST_APP.corpId)));
      expect(verifier().open(query, body)).toBe(xml);
    }
  });

  it('refuses a length field past the end of the plaintext, and one that leaves bytes over', () => {
    const tooLong = sealRaw(pad32(plaintextOf(TEXT, TEST_APP.corpId, 10_000)));
    expect(thrown(() => verifier().receive(tooLong.query, tooLong.body)).code).toBe('bad_ciphertext');
    const tooShort = sealRaw(pad32(plaintextOf(TEXT, TEST_APP.corpId, 3)));
    expect(thrown(() => verifier().receive(tooShort.query, tooShort.body)).status).toBe(401);
  });

  it('refuses a plaintext that is not UTF-8', () => {
    const sealed = sealRaw(pad32(plaintextOf(Buffer.from([0x3c, 0xff, 0xfe, 0x3e]), TEST_APP.corpId)));
    expect(thrown(() => verifier().receive(sealed.query, sealed.body)).code).toBe('bad_ciphertext');
  });
});

describe('createCallbackVerifier › envelope and body', () => {
  it('refuses an oversized body with 413 before checking anything else', () => {
    const { query } = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S - 9999 });
    const big = `<xml><Encrypt>${'A'.repeat(64 * 1024)}</Encrypt></xml>`;
    const err = thrown(() => verifier().receive(query, big));
    expect(err).toBeInstanceOf(CallbackBodyTooLargeError);
    expect([err.code, err.status]).toEqual(['body_too_large', 413]);
    expect(thrown(() => verifier({ maxBodyBytes: 100 }).receive(query, Buffer.from(big))).status).toBe(413);
  });

  it('accepts a body given as bytes, and Encrypt without CDATA', () => {
    const sealed = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    const bare = `<?xml version="1.0"?>\n<xml>\n<Encrypt>${sealed.encrypt}</Encrypt>\n</xml>\n`;
    expect(verifier().receive(sealed.query, new TextEncoder().encode(bare)).kind).toBe('text');
  });

  it.each([
    ['no Encrypt element', (e: string) => `<xml><ToUserName>x</ToUserName><X>${e}</X></xml>`],
    ['two Encrypt elements', (e: string) => `<xml><Encrypt>${e}</Encrypt><Encrypt>${e}</Encrypt></xml>`],
    ['an empty Encrypt', () => '<xml><Encrypt><![CDATA[]]></Encrypt></xml>'],
    ['not an <xml> document', (e: string) => `{"Encrypt":"${e}"}`],
    ['garbage', () => '\u0000\u0001garbage'],
  ])('answers 400 bad_xml for an envelope with %s', (_what, make) => {
    const sealed = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    const err = thrown(() => verifier().receive(sealed.query, make(sealed.encrypt)));
    expect(err).toBeInstanceOf(CallbackXmlError);
    expect([err.code, err.status, (err as CallbackXmlError).part]).toEqual(['bad_xml', 400, 'envelope']);
  });

  it('refuses a DOCTYPE or entity in the envelope without expanding it (billion laughs)', () => {
    const sealed = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S });
    const lol = '<!DOCTYPE xml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>';
    const err = thrown(() =>
      verifier().receive(sealed.query, `${lol}${sealed.body.replace('<xml>', '<xml>&b;')}`),
    );
    expect([err.code, (err as CallbackXmlError).part]).toEqual(['bad_xml', 'envelope']);
  });

  it('refuses XXE and billion laughs inside an authentic, decryptable message (the parser never sees them)', () => {
    const xxe =
      '<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY x SYSTEM "file:///etc/passwd">]>' +
      `<xml><MsgType>text</MsgType><CreateTime>${NOW_S}</CreateTime><MsgId>1</MsgId><Content>&x;</Content></xml>`;
    const sealed = sealCallback(TEST_APP, xxe, { timestamp: NOW_S });
    expect(verifier().open(sealed.query, sealed.body)).toBe(xxe); // authentic, only the XML is refused
    const err = thrown(() => verifier().receive(sealed.query, sealed.body));
    expect([err.code, err.status, (err as CallbackXmlError).part]).toEqual(['bad_xml', 400, 'message']);
  });

  it('answers 400 bad_xml for garbage that decrypts fine', () => {
    const sealed = sealCallback(TEST_APP, '<xml><MsgType>text</Msg', { timestamp: NOW_S });
    expect(thrown(() => verifier().receive(sealed.query, sealed.body)).code).toBe('bad_xml');
  });

  it('refuses a config whose EncodingAESKey is not 43 base64 characters at construction', () => {
    expect(() => createCallbackVerifier({ ...TEST_APP, encodingAESKey: 'short' })).toThrow(TypeError);
    expect(() => createCallbackVerifier({ ...TEST_APP, token: '' })).toThrow(TypeError);
  });

  it('round-trips through @wecom/crypto encrypt with a random prefix each time', () => {
    const a = encrypt(TEST_APP.encodingAESKey, TEXT, TEST_APP.corpId);
    const b = encrypt(TEST_APP.encodingAESKey, TEXT, TEST_APP.corpId);
    expect(a).not.toBe(b);
    for (const value of [a, b]) {
      const sealed = sealCallback(TEST_APP, TEXT, { timestamp: NOW_S, encrypt: value });
      expect(verifier().open(sealed.query, sealed.body)).toBe(TEXT);
    }
  });
});
