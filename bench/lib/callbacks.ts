/**
 * WeCom callbacks for the callback benchmarks, built as WeCom builds them: the event XML encrypted for the app's
 * corpId with `@wecom/crypto`, signed with its callback token (getSignature over token, timestamp, nonce and
 * ciphertext), posted to `/v1/wecom/callback/<app>`. Each distinct callback carries a marker (`cb-<run>-<i>`) in
 * its content or EventKey, so what the store holds afterwards can be matched one by one (`tallyStored`).
 */
import { encrypt, getSignature } from '@wecom/crypto';
import type { GatewayConfig } from '#lib/config/index.js';
import type { LoadSpec } from './load.js';

/** WeCom waits 5 s for the answer to a callback, then gives up on it and retries (path/90238). */
export const WECOM_ANSWER_MS = 5_000;

/** Issue 11's burst: 200 callbacks at 200/s (the whole burst within one second), one in ten a retry. */
export const BURST = { count: 200, ratePerSec: 200, retryEvery: 10 } as const;

/** What WeCom knows of an app (its admin console's 接收消息 › API接收 settings). */
export interface CallbackApp {
  /** The app's name in the gateway config: the callback URL's last segment. */
  readonly name: string;
  readonly corpId: string;
  readonly agentId: number;
  readonly token: string;
  readonly encodingAESKey: string;
}

/** The first app of a config that has callback settings, as WeCom knows it. */
export function callbackAppOf(config: GatewayConfig): CallbackApp {
  const [name, app] = Object.entries(config.apps).find(([, a]) => a.callback) ?? [];
  if (!name || !app?.callback) throw new Error('the config has no app with callback settings');
  return { name, corpId: app.corpId, agentId: app.agentId, ...app.callback };
}

export interface SealedCallback {
  readonly path: string;
  readonly body: string;
}

export interface CallbackBurst {
  /** Indices of the distinct callbacks (retries are the same signed request again). */
  readonly distinct: readonly number[];
  /** In posting order, retries included. */
  readonly requests: readonly SealedCallback[];
}

/**
 * An open-loop phase posting `requests` to `origin` at `ratePerSec` (arrivals on schedule whatever the answers
 * do, so a slow server cannot slow them down): issue 11's burst at `BURST.ratePerSec`, or a slower trickle that
 * opens connections and compiles code paths, or shows the answer time when nothing queues.
 */
export function callbackLoad(
  origin: string,
  requests: readonly SealedCallback[],
  ratePerSec: number = BURST.ratePerSec,
): LoadSpec {
  return {
    origin,
    path: '/',
    method: 'POST',
    headers: { 'content-type': 'text/xml' },
    requests,
    mode: 'open',
    ratePerSec,
    durationMs: (requests.length * 1000) / ratePerSec,
    connections: ratePerSec >= BURST.ratePerSec ? 64 : 8,
    maxInFlight: requests.length,
  };
}

const cdata = (s: string) => `<![CDATA[${s}]]>`;

const markerOf = (runId: string, i: number) => `cb-${runId}-${i}`;

/** WeCom's inner XML for callback i: a text message, a menu click or a menu view, from one of 50 members. */
export function eventXml(app: CallbackApp, i: number, runId: string, createTime: number): string {
  const marker = markerOf(runId, i);
  const head = `<ToUserName>${cdata(app.corpId)}</ToUserName><FromUserName>${cdata(`user${i % 50}`)}</FromUserName><CreateTime>${createTime}</CreateTime>`;
  const agent = `<AgentID>${app.agentId}</AgentID>`;
  switch (i % 3) {
    case 0:
      return `<xml>${head}<MsgType>${cdata('text')}</MsgType><Content>${cdata(`bench ${marker}`)}</Content><MsgId>${9_000_000_000_000 + i}</MsgId>${agent}</xml>`;
    case 1:
      return `<xml>${head}<MsgType>${cdata('event')}</MsgType><Event>${cdata('click')}</Event><EventKey>${cdata(marker)}</EventKey>${agent}</xml>`;
    default:
      return `<xml>${head}<MsgType>${cdata('event')}</MsgType><Event>${cdata('view')}</Event><EventKey>${cdata(`https://x.example/${marker}`)}</EventKey>${agent}</xml>`;
  }
}

/** The signed POST WeCom would make for `xml`. */
export function seal(app: CallbackApp, xml: string, timestamp: number, nonce: string): SealedCallback {
  const encrypted = encrypt(app.encodingAESKey, xml, app.corpId);
  const signature = getSignature(app.token, timestamp, nonce, encrypted);
  const query = new URLSearchParams({ msg_signature: signature, timestamp: String(timestamp), nonce });
  return {
    path: `/v1/wecom/callback/${encodeURIComponent(app.name)}?${query}`,
    body: `<xml><ToUserName>${cdata(app.corpId)}</ToUserName><Encrypt>${cdata(encrypted)}</Encrypt><AgentID>${cdata(String(app.agentId))}</AgentID></xml>`,
  };
}

/**
 * `count` callbacks numbered from `from`; every `retryEvery`-th is WeCom retrying an earlier one (the same signed
 * request again, which must be stored once).
 */
export function prepareBurst(
  app: CallbackApp,
  opts: { runId: string; from: number; count: number; retryEvery: number; now?: number },
): CallbackBurst {
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const distinct: number[] = [];
  const sealed = new Map<number, SealedCallback>();
  const requests: SealedCallback[] = [];
  for (let i = opts.from; i < opts.from + opts.count; i++) {
    const retryOf =
      i % opts.retryEvery === opts.retryEvery - 1 ? distinct[Math.floor(distinct.length / 2)] : undefined;
    if (retryOf !== undefined) requests.push(sealed.get(retryOf) as SealedCallback);
    else {
      const request = seal(app, eventXml(app, i, opts.runId, now), now, `${opts.runId}${i}`);
      distinct.push(i);
      sealed.set(i, request);
      requests.push(request);
    }
  }
  return { distinct, requests };
}

/**
 * Matches stored events (any shape that holds the event's content or EventKey: the store's or the API's) against
 * the distinct callbacks of a burst: stored once, missing, stored more than once. Events of other runs or
 * bursts are ignored.
 */
export function tallyStored(
  events: readonly unknown[],
  runId: string,
  distinct: readonly number[],
): { once: number; missing: number[]; duplicated: number[] } {
  const wanted = new Set(distinct);
  const seen = new Map<number, number>();
  const pattern = new RegExp(`cb-${runId.replace(/[^A-Za-z0-9]/g, '\\$&')}-(\\d+)(?!\\d)`);
  for (const event of events) {
    const match = pattern.exec(JSON.stringify(event));
    const i = match ? Number(match[1]) : Number.NaN;
    if (wanted.has(i)) seen.set(i, (seen.get(i) ?? 0) + 1);
  }
  return {
    once: distinct.filter((i) => seen.get(i) === 1).length,
    missing: distinct.filter((i) => !seen.has(i)),
    duplicated: distinct.filter((i) => (seen.get(i) ?? 0) > 1),
  };
}

/** The "stored once" row's text. */
export function storedOnce(tally: ReturnType<typeof tallyStored>, distinct: number, posted: number): string {
  const faults = [
    tally.missing.length > 0 ? `${tally.missing.length} missing` : '',
    tally.duplicated.length > 0 ? `${tally.duplicated.length} stored more than once` : '',
  ].filter(Boolean);
  return `${tally.once} of ${distinct} distinct (${posted} posted${faults.length > 0 ? `; ${faults.join(', ')}` : ''})`;
}
