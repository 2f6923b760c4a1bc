import { WindowLog } from './windows.js';

export interface IpBanSnapshot {
  /** Wrong-secret gettoken calls per IP within the last hour. */
  wrongSecretsByIp: Record<string, number>;
  /** Banned IPs → when the ban ends (simulator clock, ms). */
  bannedUntil: Record<string, number>;
}

/**
 * WeCom's global errcode page, under 45009: "调用gettoken接口时,使用错误的secret多次调用,会导致同一个IP被禁用一小时"
 * (https://developer.work.weixin.qq.com/document/path/90313). It names no threshold (readings.ts `ipBanAfter`)
 * and not which calls a banned IP loses; the simulator bans every API call from it, answering 45009 — the
 * errcode whose note describes the ban, and what gettoken is seen answering when WeCom throttles it
 * ("api freq out of limit ... from ip").
 */
export class IpBans {
  readonly #hourMs: number;
  readonly #wrongSecrets: WindowLog;
  readonly #bannedUntil = new Map<string, number>();
  readonly #seen = new Set<string>();

  constructor(hourMs: number) {
    this.#hourMs = hourMs;
    this.#wrongSecrets = new WindowLog(hourMs);
  }

  /** When the IP's ban ends, or undefined when it is not banned. */
  bannedUntil(ip: string, now: number): number | undefined {
    const until = this.#bannedUntil.get(ip);
    if (until === undefined) return undefined;
    if (now < until) return until;
    this.#bannedUntil.delete(ip);
    return undefined;
  }

  /** Counts a 40001 gettoken answer; the `threshold`-th one within an hour bans the IP (0: never). */
  wrongSecret(ip: string, now: number, threshold: number): void {
    this.#wrongSecrets.add(ip, now);
    this.#seen.add(ip);
    if (threshold > 0 && this.#lastHour(ip, now) >= threshold) this.#bannedUntil.set(ip, now + this.#hourMs);
  }

  snapshot(now: number): IpBanSnapshot {
    const wrongSecretsByIp: Record<string, number> = {};
    for (const ip of this.#seen) {
      const n = this.#lastHour(ip, now);
      if (n > 0) wrongSecretsByIp[ip] = n;
    }
    const bannedUntil: Record<string, number> = {};
    for (const [ip, until] of this.#bannedUntil) if (until > now) bannedUntil[ip] = until;
    return { wrongSecretsByIp, bannedUntil };
  }

  clear(): void {
    this.#wrongSecrets.clear();
    this.#bannedUntil.clear();
    this.#seen.clear();
  }

  #lastHour(ip: string, now: number): number {
    return this.#wrongSecrets.used(ip, now, { windows: 'rolling', windowOffsetMs: 0 });
  }
}
