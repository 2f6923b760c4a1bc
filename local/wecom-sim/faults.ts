import { InvalidFaultError } from './errors.js';
import type { FaultControl, FaultKind, FaultPath } from './types.js';

const PATHS: readonly FaultPath[] = [
  'send',
  'gettoken',
  'recall',
  'contacts',
  'updateCard',
  'robotSend',
  'robotUpload',
];
const NAMED_KINDS = new Set(['http500', 'timeout', 'timeoutAfterDelivery', 'reset', 'resetAfterDelivery']);
/** A script longer than this is a mistake, not a test. */
const MAX_SCRIPT_LENGTH = 1_000_000;

interface RatedFault {
  kind: FaultKind;
  rate: number;
}

const sameKind = (a: FaultKind, b: FaultKind): boolean =>
  typeof a === 'string' || typeof b === 'string' ? a === b : a.errcode === b.errcode;

/** Parses a fault kind received as JSON (`"timeout"`, `{ "errcode": -1 }`). */
export function parseFaultKind(value: unknown): FaultKind {
  if (typeof value === 'string' && NAMED_KINDS.has(value)) return value as FaultKind;
  if (typeof value === 'object' && value !== null && 'errcode' in value) {
    const errcode = (value as { errcode: unknown }).errcode;
    if (typeof errcode === 'number' && Number.isInteger(errcode) && errcode !== 0) return { errcode };
  }
  throw new InvalidFaultError('unknown fault kind', { kind: value });
}

export function parseFaultPath(value: unknown): FaultPath {
  if (value === undefined) return 'send';
  if (typeof value === 'string' && (PATHS as readonly string[]).includes(value)) return value as FaultPath;
  throw new InvalidFaultError('unknown fault path', { path: value });
}

/** Scripted outcomes win over random ones; both are kept per API path. */
export class Faults implements FaultControl {
  readonly #random: () => number;
  readonly #rates = new Map<FaultPath, RatedFault[]>();
  readonly #scripts = new Map<FaultPath, (FaultKind | 'ok')[]>();

  constructor(random: () => number) {
    this.#random = random;
  }

  setRate(kind: FaultKind, rate: number, opts: { path?: FaultPath } = {}): void {
    const path = parseFaultPath(opts.path);
    const checked = parseFaultKind(kind);
    if (!Number.isFinite(rate) || rate < 0 || rate > 1)
      throw new InvalidFaultError('rate must be 0..1', { rate });
    const others = (this.#rates.get(path) ?? []).filter((f) => !sameKind(f.kind, checked));
    if (rate > 0) others.push({ kind: checked, rate });
    if (others.reduce((sum, f) => sum + f.rate, 0) > 1) {
      throw new InvalidFaultError('fault rates on one path add up to more than 1', { path });
    }
    this.#rates.set(path, others);
  }

  script(kinds: (FaultKind | 'ok')[], opts: { path?: FaultPath; times?: number } = {}): void {
    const path = parseFaultPath(opts.path);
    const times = opts.times ?? 1;
    if (!Number.isInteger(times) || times < 1 || times * kinds.length > MAX_SCRIPT_LENGTH)
      throw new InvalidFaultError(`times must be an integer >= 1 (at most ${MAX_SCRIPT_LENGTH} outcomes)`, {
        times,
      });
    const checked = kinds.map((k) => (k === 'ok' ? k : parseFaultKind(k)));
    const script = this.#scripts.get(path) ?? [];
    for (let i = 0; i < times; i++) script.push(...checked);
    this.#scripts.set(path, script);
  }

  clear(): void {
    this.#rates.clear();
    this.#scripts.clear();
  }

  /** The outcome for the next call on the path: a fault, or undefined for normal behaviour. */
  next(path: FaultPath): FaultKind | undefined {
    const script = this.#scripts.get(path);
    if (script !== undefined && script.length > 0) {
      const outcome = script.shift();
      return outcome === 'ok' ? undefined : outcome;
    }
    const rates = this.#rates.get(path);
    if (rates === undefined || rates.length === 0) return undefined;
    let draw = this.#random();
    for (const f of rates) {
      if (draw < f.rate) return f.kind;
      draw -= f.rate;
    }
    return undefined;
  }
}
