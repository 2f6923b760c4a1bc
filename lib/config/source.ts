import type { ConfigText } from './load.js';
import { parseConfigJson } from './parse.js';
import type { GatewayConfig } from './schema.js';

/**
 * How old the config a warm container uses may get: it is read again on the first invocation after this, so a
 * revoked API key or a changed app stops (or starts) working within about a minute, without a redeploy. One
 * Secrets Manager read per container per minute costs about USD 0.05 per 10,000 (https://aws.amazon.com/secrets-manager/pricing/).
 */
export const CONFIG_MAX_AGE_MS = 60_000;

export interface ConfigSourceOptions {
  /** Default {@link CONFIG_MAX_AGE_MS}; tests shorten it. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
  /** A re-read failed or the new document is invalid: the last good config stays in force. */
  readonly onError?: (err: unknown) => void;
  /** A re-read found a different, valid document, now in force. */
  readonly onChange?: (source: string) => void;
}

/**
 * The config of one container, re-read when it is older than `maxAgeMs` and never replaced by a bad one: a
 * warm container keeps serving with its last good config when the store cannot be read or holds an invalid
 * document (reported through `onError`, which logs and counts a metric that an alarm watches).
 *
 * @example
 * const source = await ConfigSource.load(createConfigReader(env), { onError: (err) => log.error('config', { err }) });
 * await source.refresh(); // at the start of each invocation; cheap while fresh
 * source.current.apps.ops;
 */
export class ConfigSource {
  private readAt: number;
  private text: string | undefined;
  private pending: Promise<GatewayConfig> | undefined;

  private constructor(
    private config: GatewayConfig,
    private readonly read: (() => Promise<ConfigText>) | undefined,
    private readonly opts: ConfigSourceOptions,
    text?: string,
  ) {
    this.readAt = this.now();
    this.text = text;
  }

  /** First read, at cold start: here a missing or invalid config fails the container's init with its reason. */
  static async load(read: () => Promise<ConfigText>, opts: ConfigSourceOptions = {}): Promise<ConfigSource> {
    const { text, source } = await read();
    return new ConfigSource(parseConfigJson(text, source), read, opts, text);
  }

  /** A config that never changes (tests and benchmarks hand one over directly). */
  static fixed(config: GatewayConfig): ConfigSource {
    return new ConfigSource(config, undefined, {});
  }

  get current(): GatewayConfig {
    return this.config;
  }

  /** Re-reads the config if it is older than `maxAgeMs`. Never throws; concurrent callers share one read. */
  refresh(): Promise<GatewayConfig> {
    if (!this.read || this.now() - this.readAt < (this.opts.maxAgeMs ?? CONFIG_MAX_AGE_MS)) {
      return Promise.resolve(this.config);
    }
    this.pending ??= this.reread(this.read).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async reread(read: () => Promise<ConfigText>): Promise<GatewayConfig> {
    try {
      const { text, source } = await read();
      // Unchanged text keeps the same object, so what is derived from it (authenticator, URL guard) is kept.
      if (text !== this.text) {
        this.config = parseConfigJson(text, source);
        this.text = text;
        this.opts.onChange?.(source);
      }
    } catch (err) {
      this.opts.onError?.(err);
    }
    // A failed read counts as a check too: the store is asked again after maxAgeMs, not on every invocation.
    this.readAt = this.now();
    return this.config;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
