import type { SimReadings } from './readings.js';
import type { DropReason, SimLimits, SimWindows } from './types.js';
import { WindowLog } from './windows.js';

/** WeCom's day is the calendar day in China Standard Time (UTC+8). */
const CST_OFFSET_MS = 8 * 3_600_000;
const REAL_DAY_MS = 86_400_000;

export type Refusal = { detail: string };

export interface BlockSnapshot {
  /** `corpId/agentId|api` → when the block ends (simulator clock, ms). */
  [key: string]: number;
}

/**
 * WeCom's limits for one simulated corp, counted under the current readings: the per app per API minute and
 * hour limits and the day's person-times (answered with 45009 and a block), and the per member per app minute
 * and hour limits (excess dropped silently). No HTTP and no answers here; the corp turns refusals into errcodes.
 */
export class Limits {
  readonly #limits: SimLimits;
  readonly #windows: SimWindows;
  readonly #dayQuota: number;
  readonly #readings: () => Readonly<SimReadings>;
  readonly #apiMinute: WindowLog;
  readonly #apiHour: WindowLog;
  readonly #personTimesDay: WindowLog;
  readonly #memberMinute: WindowLog;
  readonly #memberHour: WindowLog;
  readonly #blockedUntil = new Map<string, number>();

  /** @param dayQuota person-times an app may send per day (WeCom: seats × 200). */
  constructor(
    limits: SimLimits,
    windows: SimWindows,
    dayQuota: number,
    readings: () => Readonly<SimReadings>,
  ) {
    this.#limits = limits;
    this.#windows = windows;
    this.#dayQuota = dayQuota;
    this.#readings = readings;
    this.#apiMinute = new WindowLog(windows.minuteMs);
    this.#apiHour = new WindowLog(windows.hourMs);
    // Scaled test days keep epoch alignment, so tests can reason about them.
    this.#personTimesDay = new WindowLog(windows.dayMs, windows.dayMs === REAL_DAY_MS ? -CST_OFFSET_MS : 0);
    this.#memberMinute = new WindowLog(windows.minuteMs);
    this.#memberHour = new WindowLog(windows.hourMs);
  }

  /**
   * One call of an API by an app. WeCom's frequency interception lasts as long as the limit's own period
   * ("按分钟拦截则被屏蔽60秒,按小时拦截则被屏蔽60分钟"): a minute-limit hit blocks the API for 60 s from that
   * moment, an hour-limit hit for an hour. Blocked and refused calls are not counted.
   */
  admitApiCall(key: string, now: number): Refusal | undefined {
    const blockedUntil = this.#blockedUntil.get(key);
    if (blockedUntil !== undefined) {
      if (now < blockedUntil) return { detail: 'app blocked' };
      this.#blockedUntil.delete(key);
    }
    const reading = this.#readings();
    if (this.#apiMinute.used(key, now, reading) + 1 > this.#limits.perAppPerMinute) {
      this.#block(key, now + this.#windows.minuteMs);
      return { detail: 'minute limit' };
    }
    if (this.#apiHour.used(key, now, reading) + 1 > this.#limits.perAppPerHour) {
      this.#block(key, now + this.#windows.hourMs);
      return { detail: 'hour limit' };
    }
    this.#apiMinute.add(key, now);
    this.#apiHour.add(key, now);
    return undefined;
  }

  /**
   * Charges a send's person-times to the app's day, or refuses it. Under the `block` reading the refusal also
   * blocks `blockKey` (the app's message/send) until WeCom's natural day ends.
   */
  chargePersonTimes(appKey: string, blockKey: string, personTimes: number, now: number): Refusal | undefined {
    const reading = this.#readings();
    if (this.#personTimesDay.used(appKey, now, reading) + personTimes > this.#dayQuota) {
      if (reading.dayLimit === 'block') this.#block(blockKey, this.dayEnd(now));
      return { detail: 'daily person-times limit' };
    }
    this.#personTimesDay.add(appKey, now, personTimes);
    return undefined;
  }

  /** When WeCom's (natural) day holding `now` ends, under the reading's window offset. */
  dayEnd(now: number): number {
    return this.#personTimesDay.windowStart(now, this.#readings()) + this.#windows.dayMs;
  }

  /** One delivery to a member; only messages the member actually receives use up the limit. */
  admitMember(key: string, now: number): DropReason | undefined {
    const reading = this.#readings();
    if (this.#memberMinute.used(key, now, reading) >= this.#limits.perMemberPerMinute) return 'member_minute';
    if (this.#memberHour.used(key, now, reading) >= this.#limits.perMemberPerHour) return 'member_hour';
    this.#memberMinute.add(key, now);
    this.#memberHour.add(key, now);
    return undefined;
  }

  /** Blocks in force at `now`. */
  blocks(now: number): BlockSnapshot {
    const out: BlockSnapshot = {};
    for (const [key, until] of this.#blockedUntil) if (until > now) out[key] = until;
    return out;
  }

  clear(): void {
    this.#apiMinute.clear();
    this.#apiHour.clear();
    this.#personTimesDay.clear();
    this.#memberMinute.clear();
    this.#memberHour.clear();
    this.#blockedUntil.clear();
  }

  #block(key: string, until: number): void {
    this.#blockedUntil.set(key, Math.max(until, this.#blockedUntil.get(key) ?? 0));
  }
}
