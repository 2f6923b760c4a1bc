import { randomInt } from 'node:crypto';
import { encrypt, getSignature } from '@wecom/crypto';
import type { SendCallbackArgs } from './types.js';

export const cdata = (s: string): string => `<![CDATA[${s.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;

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

/** WeCom: "五秒内收不到响应会断掉连接,并且重新发起请求,总共重试三次" (path/90238). */
const WECOM_CALLBACK_TIMEOUT_MS = 5_000;
const WECOM_CALLBACK_RETRIES = 3;

export interface CallbackDelivery {
  /** The last answer's status; 0 when none came (timeout, connection refused). */
  status: number;
  body: string;
  /** Requests made: 1, plus one per retry. */
  attempts: number;
}

/**
 * Posts a callback the way WeCom does: the same signed request again after any answer but 200 or after 5 s
 * without one, three retries at most.
 */
export async function sendCallback(
  args: SendCallbackArgs,
  nowMs: number,
  opts: { retries?: number; timeoutMs?: number } = {},
): Promise<CallbackDelivery> {
  const request = buildCallbackRequest(args, nowMs);
  const retries = opts.retries ?? WECOM_CALLBACK_RETRIES;
  let last: CallbackDelivery = { status: 0, body: '', attempts: 0 };
  for (let attempt = 1; attempt <= 1 + retries; attempt++) {
    try {
      const res = await fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8' },
        body: request.body,
        signal: AbortSignal.timeout(opts.timeoutMs ?? WECOM_CALLBACK_TIMEOUT_MS),
      });
      last = { status: res.status, body: await res.text(), attempts: attempt };
    } catch {
      last = { status: 0, body: '', attempts: attempt };
    }
    if (last.status === 200) break;
  }
  return last;
}
