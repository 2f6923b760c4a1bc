import { randomInt } from 'node:crypto';
import { encrypt, getSignature } from '@wecom/crypto';
import type { SendCallbackArgs } from './types.js';

const cdata = (s: string): string => `<![CDATA[${s.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;

/**
 * Builds the encrypted envelope WeCom POSTs to an app's callback URL (接收消息与事件): the event XML is
 * AES-encrypted with the corpId as receiveid, and msg_signature = sha1(sort(token, timestamp, nonce,
 * encrypt)) travels in the query string next to timestamp and nonce.
 */
export function buildCallbackRequest(
  args: SendCallbackArgs,
  nowMs: number,
): { url: string; body: string; encrypted: string; signature: string } {
  const timestamp = args.timestamp ?? Math.floor(nowMs / 1000);
  const nonce = args.nonce ?? String(randomInt(1_000_000_000, 9_999_999_999));
  const encrypted = encrypt(args.encodingAESKey, args.xml, args.corpId);
  const signature = getSignature(args.token, timestamp, nonce, encrypted);
  const agentId = args.agentId ?? /<AgentID>\s*(?:<!\[CDATA\[)?(\d+)/.exec(args.xml)?.[1];
  const body =
    `<xml><ToUserName>${cdata(args.corpId)}</ToUserName><Encrypt>${cdata(encrypted)}</Encrypt>` +
    `${agentId === undefined ? '' : `<AgentID>${cdata(String(agentId))}</AgentID>`}</xml>`;
  const url = new URL(args.url);
  url.searchParams.set('msg_signature', signature);
  url.searchParams.set('timestamp', String(timestamp));
  url.searchParams.set('nonce', nonce);
  return { url: url.toString(), body, encrypted, signature };
}

export async function sendCallback(
  args: SendCallbackArgs,
  nowMs: number,
): Promise<{ status: number; body: string }> {
  const request = buildCallbackRequest(args, nowMs);
  const res = await fetch(request.url, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: request.body,
  });
  return { status: res.status, body: await res.text() };
}
