import { createHash } from 'node:crypto';
import { copyWithArrival, stampArrival } from './arrival.js';
import type { SimReadings } from './readings.js';
import { MAX_DUPLICATE_CHECK_INTERVAL_S } from './validation.js';

/**
 * WeCom's duplicate check (`enable_duplicate_check`, `duplicate_check_interval`), under both readings
 * (readings.ts `duplicateCheck`). Both fingerprints are kept for every accepted send, so the reading can change
 * at runtime.
 *
 * What WeCom answers for a suppressed duplicate is not documented. The simulator answers errcode 0 with the
 * recipients report and the msgid of the earlier message (a client that records it can still recall what was
 * delivered); nothing is delivered or charged. Every suppression is recorded (`GET /__sim/duplicates`).
 */
export interface SuppressedDuplicate {
  at: number;
  agentId: number;
  /** The msgid answered: the earlier message's. */
  msgid: string;
  /** When the earlier message was accepted. */
  originalAt: number;
  /** The reading that suppressed it. */
  reading: SimReadings['duplicateCheck'];
  /** The suppressed send's duplicate_check_interval, seconds. */
  intervalS: number;
}

interface Seen {
  msgid: string;
  at: number;
}

export interface SendToCheck {
  /** `corpId/agentId`: fingerprints never match across apps. */
  appKey: string;
  agentId: number;
  body: Record<string, unknown>;
  rawBody: string;
  intervalS: number;
}

const SUPPRESSED_LIMIT = 10_000;
const hash = (s: string): string => createHash('sha1').update(s).digest('base64url');
const isFlagged = (body: Record<string, unknown>): boolean =>
  body.enable_duplicate_check === 1 || body.enable_duplicate_check === true;

/** Lenient: "同样内容" read as the same app, message type, message object and recipients. */
function contentFingerprint(s: SendToCheck): string {
  const b = s.body;
  const msgtype = String(b.msgtype);
  return hash(JSON.stringify([s.appKey, msgtype, b[msgtype], b.touser, b.toparty, b.totag]));
}

/** Strict: "同样内容(请求json)" read as the same request body, byte for byte; WeCom names no normalisation. */
const requestFingerprint = (s: SendToCheck): string => hash(`${s.appKey}\n${s.rawBody}`);

export class DuplicateCheck {
  readonly #reading: () => SimReadings['duplicateCheck'];
  /** Lenient fingerprints of every accepted send. */
  #content = new Map<string, Seen>();
  /** Strict fingerprints of accepted flagged sends. */
  #flagged = new Map<string, Seen>();
  #suppressed: SuppressedDuplicate[] = [];

  constructor(reading: () => SimReadings['duplicateCheck']) {
    this.#reading = reading;
  }

  /** The earlier message this send duplicates (then it must not be delivered), or undefined. */
  check(s: SendToCheck, now: number): Seen | undefined {
    this.#prune(now);
    if (!isFlagged(s.body)) return undefined;
    const reading = this.#reading();
    const earlier =
      reading === 'strict'
        ? this.#flagged.get(requestFingerprint(s))
        : this.#content.get(contentFingerprint(s));
    if (earlier === undefined || now - earlier.at >= s.intervalS * 1000) return undefined;
    this.#suppressed.push(
      stampArrival({
        at: now,
        agentId: s.agentId,
        msgid: earlier.msgid,
        originalAt: earlier.at,
        reading,
        intervalS: s.intervalS,
      }),
    );
    if (this.#suppressed.length > 2 * SUPPRESSED_LIMIT) this.#suppressed.splice(0, SUPPRESSED_LIMIT);
    return earlier;
  }

  /** Records an accepted (delivered) send. */
  remember(s: SendToCheck, msgid: string, now: number): void {
    const seen = { msgid, at: now };
    const put = (map: Map<string, Seen>, key: string) => {
      // Re-inserted so that the map stays in time order for pruning.
      map.delete(key);
      map.set(key, seen);
    };
    put(this.#content, contentFingerprint(s));
    if (isFlagged(s.body)) put(this.#flagged, requestFingerprint(s));
  }

  suppressed(): SuppressedDuplicate[] {
    return this.#suppressed.slice(-SUPPRESSED_LIMIT).map(copyWithArrival);
  }

  clear(): void {
    this.#content = new Map();
    this.#flagged = new Map();
    this.#suppressed = [];
  }

  #prune(now: number): void {
    for (const map of [this.#content, this.#flagged]) {
      for (const [key, seen] of map) {
        if (now - seen.at <= MAX_DUPLICATE_CHECK_INTERVAL_S * 1000) break;
        map.delete(key);
      }
    }
  }
}
