import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decrypt, getSignature } from '@wecom/crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCallbackRequest, type WecomSimulator } from '#local/wecom-sim/index.js';
import { startTestSimulator } from '#test/helpers/sim-fixtures.js';

// Official test vector from WeCom's callback docs (see TOOLCHAIN.md).
const VECTOR = {
  token: 'QDG6eK',
  encodingAESKey: 'jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C',
  corpId: 'wx5823bf96d3bd56c7',
  timestamp: 1409659589,
  nonce: '263014780',
  echostr: 'P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ==',
  signature: '5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3',
  plaintext: '1616140317555161061',
};

const EVENT_XML =
  '<xml><ToUserName><![CDATA[wx5823bf96d3bd56c7]]></ToUserName><FromUserName><![CDATA[alice]]></FromUserName>' +
  '<CreateTime>1409659813</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[click]]></Event>' +
  '<EventKey><![CDATA[ack]]></EventKey><AgentID>1000002</AgentID></xml>';

interface Received {
  query: URLSearchParams;
  body: string;
}

/** A stand-in for the gateway's callback endpoint that verifies like the real one must. */
function startReceiver(received: Received[]): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ query, body });
      const encrypted = /<Encrypt><!\[CDATA\[(.*?)\]\]><\/Encrypt>/.exec(body)?.[1] ?? '';
      const expected = getSignature(
        VECTOR.token,
        query.get('timestamp') ?? '',
        query.get('nonce') ?? '',
        encrypted,
      );
      res.writeHead(query.get('msg_signature') === expected ? 200 : 403);
      res.end(query.get('msg_signature') === expected ? 'success' : 'bad signature');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('WeCom simulator › callbacks', () => {
  let sim: WecomSimulator;
  let receiver: Server;
  let received: Received[];

  beforeEach(async () => {
    received = [];
    sim = await startTestSimulator();
    receiver = await startReceiver(received);
  });
  afterEach(async () => {
    await sim.stop();
    await new Promise((r) => receiver.close(r));
  });

  it('matches the official test vector with @wecom/crypto', () => {
    expect(getSignature(VECTOR.token, VECTOR.timestamp, VECTOR.nonce, VECTOR.echostr)).toBe(VECTOR.signature);
    expect(decrypt(VECTOR.encodingAESKey, VECTOR.echostr)).toMatchObject({
      message: VECTOR.plaintext,
      id: VECTOR.corpId,
    });
  });

  it('posts a signed, encrypted envelope that decrypts back to the event XML', async () => {
    const port = (receiver.address() as AddressInfo).port;

    const result = await sim.sendCallback({
      url: `http://127.0.0.1:${port}/v1/callback/app1`,
      token: VECTOR.token,
      encodingAESKey: VECTOR.encodingAESKey,
      corpId: VECTOR.corpId,
      xml: EVENT_XML,
      timestamp: 1409659813,
      nonce: '1372623149',
    });

    expect(result).toEqual({ status: 200, body: 'success', attempts: 1 });
    const [req] = received;
    expect(req?.query.get('timestamp')).toBe('1409659813');
    expect(req?.query.get('nonce')).toBe('1372623149');
    expect(req?.body).toMatch(/^<xml><ToUserName><!\[CDATA\[wx5823bf96d3bd56c7\]\]><\/ToUserName><Encrypt>/);
    expect(req?.body).toContain('<AgentID><![CDATA[1000002]]></AgentID>');
    const encrypted = /<Encrypt><!\[CDATA\[(.*?)\]\]>/.exec(req?.body ?? '')?.[1] ?? '';
    expect(decrypt(VECTOR.encodingAESKey, encrypted)).toMatchObject({
      message: EVENT_XML,
      id: VECTOR.corpId,
    });
  });

  it('signs with the callback token, so a receiver with another token rejects it', async () => {
    const port = (receiver.address() as AddressInfo).port;

    const result = await sim.sendCallback({
      url: `http://127.0.0.1:${port}/cb`,
      token: 'another-token',
      encodingAESKey: VECTOR.encodingAESKey,
      corpId: VECTOR.corpId,
      xml: EVENT_XML,
    });

    expect(result.status).toBe(403);
  });

  it('keeps query parameters already in the callback URL', () => {
    const request = buildCallbackRequest(
      {
        url: 'http://127.0.0.1:1/cb?app=a1',
        token: VECTOR.token,
        encodingAESKey: VECTOR.encodingAESKey,
        corpId: VECTOR.corpId,
        xml: EVENT_XML,
        nonce: '1',
      },
      1_409_659_813_000,
    );

    const url = new URL(request.url);
    expect(url.searchParams.get('app')).toBe('a1');
    expect(url.searchParams.get('timestamp')).toBe('1409659813');
    expect(url.searchParams.get('msg_signature')).toBe(request.signature);
  });
});
