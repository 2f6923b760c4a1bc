import { isIP } from 'node:net';
import { type CheckedLookupOptions, checkedAddresses, normaliseHost } from './checked-lookup.js';
import { UnsafeUrlError } from './errors.js';

export interface UrlGuardOptions extends CheckedLookupOptions {
  /** How long a verdict for a host is reused. Default 60 s; 0 disables the cache. */
  cacheTtlMs?: number;
  now?: () => number;
}

/** Port: decides whether the gateway may make requests to a URL on a client's behalf. */
export interface UrlGuard {
  /**
   * Resolves when `url` is https and every address its host resolves to is public.
   * @throws UnsafeUrlError (the client must change the URL) or LookupUnavailableError (retry later)
   */
  assertSafe(url: string): Promise<void>;
}

const DEFAULT_CACHE_TTL_MS = 60_000;
/** Bounds the verdict cache; a container sees few distinct webhook hosts. */
const MAX_CACHED_HOSTS = 1_000;

/**
 * SSRF guard for webhook targets (SPEC §2 "Outbound webhooks"): https only, and the host — an IP literal as is,
 * a name through DNS — must not be or resolve to a private, loopback, link-local, CGNAT, multicast, unspecified
 * or otherwise special-purpose address. Every resolved address must pass, because the HTTP client may connect
 * to any of them. Checking at submission gives the client a 400 now; the sender of the webhook must check again
 * right before connecting (DNS answers change: rebinding) — `lib/webhooks` does, at connect time.
 *
 * @example
 * const guard = createUrlGuard({ allowLoopback: config.allowLoopbackWebhooks });
 * await guard.assertSafe('https://hooks.example.com/wecom'); // throws UnsafeUrlError for https://10.0.0.5/
 */
export function createUrlGuard(opts: UrlGuardOptions = {}): UrlGuard {
  const cacheTtlMs = opts.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const now = opts.now ?? Date.now;
  const verdicts = new Map<string, { until: number; unsafe?: { address: string; why: string } }>();

  return {
    async assertSafe(url: string): Promise<void> {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch (err) {
        throw new UnsafeUrlError('must be an absolute URL', url, undefined, { cause: err });
      }
      if (parsed.protocol !== 'https:') throw new UnsafeUrlError('must use https', url);
      // WHATWG URL has already normalised IPv4 forms such as 0x7f.1 or 2130706433 to dotted decimal.
      const host = normaliseHost(parsed.hostname);
      if (host === '' || isIP(host) || host === 'localhost' || host.endsWith('.localhost')) {
        await checkedAddresses(host, url, opts); // no DNS involved: nothing worth caching
        return;
      }

      const cached = verdicts.get(host);
      if (cached && cached.until > now()) {
        if (cached.unsafe) throw new UnsafeUrlError(cached.unsafe.why, url, cached.unsafe.address);
        return;
      }
      const remember = (unsafe?: { address: string; why: string }) => {
        if (cacheTtlMs <= 0) return;
        if (verdicts.size >= MAX_CACHED_HOSTS) verdicts.clear();
        verdicts.set(host, { until: now() + cacheTtlMs, ...(unsafe ? { unsafe } : {}) });
      };
      try {
        await checkedAddresses(host, url, opts);
      } catch (err) {
        // Only verdicts about addresses DNS gave are reused; a lookup that failed (no such name, no answer now)
        // is asked again next time.
        if (err instanceof UnsafeUrlError && err.cause === undefined) {
          remember({ address: err.address ?? '', why: err.message });
        }
        throw err;
      }
      remember();
    },
  };
}
