import { SimulatorError } from './errors.js';

/**
 * Where WeCom's documentation allows two readings of a rule, the simulator can play either, so that a gateway
 * test fails if the gateway relies on the lenient one (issue 9). Each field names one ambiguous rule; the
 * `strict` preset picks the reading that is harder for a client, `lenient` the one the simulator played before
 * readings existed.
 */
export interface SimReadings {
  /**
   * How every limit counts (per member per minute/hour, per app API minute/hour, per app day person-times).
   * WeCom says "30次/分钟" without saying whether the minute is fixed or sliding.
   * - `fixed`: windows start `windowOffsetMs` after each multiple of their length since the epoch (the day
   *   additionally at midnight China Standard Time); 24 sends at hh:mm:59 and 24 at hh:mm+1:00 all pass.
   * - `rolling`: no window of the limit's length, wherever it starts, may hold more than the limit.
   */
  windows: 'fixed' | 'rolling';
  /** `fixed` only: how far WeCom's window starts lie after ours (a clock offset between WeCom and us). */
  windowOffsetMs: number;
  /**
   * `enable_duplicate_check`: "在一定时间间隔内,同样内容(请求json)的消息,不会重复收到".
   * - `lenient`: every accepted send is fingerprinted on content + recipients; a flagged send is suppressed when
   *   a match was accepted within its interval, even if that earlier send was not flagged.
   * - `strict`: only flagged sends are checked, only against earlier flagged sends, and "same content" means the
   *   byte-identical request body (flags and interval included), within the later send's interval.
   */
  duplicateCheck: 'lenient' | 'strict';
  /**
   * Passing the app's day person-times (seats × 200): "按天拦截则被屏蔽一天(自然天)".
   * - `refuse`: only the sends that do not fit answer 45009; a smaller send may still pass.
   * - `block`: the app's message/send answers 45009 until WeCom's natural day ends (midnight UTC+8).
   */
  dayLimit: 'refuse' | 'block';
  /**
   * Whom `toparty` reaches (also the parties of a tag): WeCom does not say whether sub-parties are included.
   * - `direct`: the party's own members.
   * - `subtree`: the party's members and those of every party below it (more person-times, more members
   *   brought to their limits).
   */
  partyReach: 'direct' | 'subtree';
  /**
   * Wrong-secret `gettoken` calls (40001) from one IP within an hour after which that IP is banned for an hour
   * ("会导致同一个IP被禁用一小时"); every API call from a banned IP answers 45009. WeCom gives no number, so
   * this is a guess; 0 turns the ban off.
   */
  ipBanAfter: number;
  /**
   * How long a card's response_code stays good for `update_template_card`: 更新模版卡片消息 (path/94945, 2025)
   * says 72 hours, the 2021 copy of 发送应用消息 says 24. Single use either way.
   */
  responseCodeTtlHours: number;
}

export type ReadingPreset = 'lenient' | 'strict';

/** What the simulator played before readings existed. */
export const LENIENT_READINGS: Readonly<SimReadings> = Object.freeze({
  windows: 'fixed',
  windowOffsetMs: 0,
  duplicateCheck: 'lenient',
  dayLimit: 'refuse',
  partyReach: 'direct',
  ipBanAfter: 0,
  responseCodeTtlHours: 72,
});

/** The harder reading of every rule. */
export const STRICT_READINGS: Readonly<SimReadings> = Object.freeze({
  windows: 'rolling',
  windowOffsetMs: 0,
  duplicateCheck: 'strict',
  dayLimit: 'block',
  partyReach: 'subtree',
  ipBanAfter: 10,
  responseCodeTtlHours: 24,
});

export const READING_PRESETS: Readonly<Record<ReadingPreset, Readonly<SimReadings>>> = Object.freeze({
  lenient: LENIENT_READINGS,
  strict: STRICT_READINGS,
});

/**
 * The readings every simulator plays unless its options say otherwise (`npm start`, tests, benchmarks): the harder
 * one of every rule (issue 9), so a test fails if the gateway relies on a lenient reading. A test of the lenient
 * reading asks for it.
 */
export const DEFAULT_READINGS: Readonly<SimReadings> = STRICT_READINGS;

/** A preset name, or fields to change (on top of `preset` when given, else on top of the current readings). */
export type SimReadingsInput = ReadingPreset | (Partial<SimReadings> & { preset?: ReadingPreset });

/** The readings could not be understood (options, `POST /__sim/readings`). */
export class InvalidReadingsError extends SimulatorError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'SIM_READINGS_INVALID', context);
    this.name = 'InvalidReadingsError';
  }
}

const CHOICES: Record<string, readonly string[]> = {
  windows: ['fixed', 'rolling'],
  duplicateCheck: ['lenient', 'strict'],
  dayLimit: ['refuse', 'block'],
  partyReach: ['direct', 'subtree'],
};

function checkField(key: string, value: unknown): void {
  const choices = CHOICES[key];
  if (choices !== undefined) {
    if (typeof value !== 'string' || !choices.includes(value))
      throw new InvalidReadingsError(`${key} must be one of ${choices.join(', ')}`, { [key]: value });
    return;
  }
  if (key === 'windowOffsetMs') {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InvalidReadingsError('windowOffsetMs must be a finite number', { windowOffsetMs: value });
    return;
  }
  if (key === 'responseCodeTtlHours') {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      throw new InvalidReadingsError('responseCodeTtlHours must be a number > 0', {
        responseCodeTtlHours: value,
      });
    return;
  }
  if (key === 'ipBanAfter') {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      throw new InvalidReadingsError('ipBanAfter must be an integer >= 0', { ipBanAfter: value });
    return;
  }
  throw new InvalidReadingsError(`unknown reading ${key}`, {
    known: ['preset', ...Object.keys(LENIENT_READINGS)],
  });
}

/** Applies `input` to `current`; throws {@link InvalidReadingsError} naming the first bad field. */
export function resolveReadings(input: unknown, current: Readonly<SimReadings>): SimReadings {
  if (input === undefined) return { ...current };
  if (typeof input === 'string') return { ...presetNamed(input) };
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new InvalidReadingsError('readings must be a preset name or an object');
  const { preset, ...fields } = input as Record<string, unknown>;
  const base = preset === undefined ? current : presetNamed(preset);
  for (const [key, value] of Object.entries(fields)) checkField(key, value);
  return { ...base, ...(fields as Partial<SimReadings>) };
}

function presetNamed(name: unknown): Readonly<SimReadings> {
  if (name === 'lenient' || name === 'strict') return READING_PRESETS[name];
  throw new InvalidReadingsError('preset must be lenient or strict', { preset: name });
}
