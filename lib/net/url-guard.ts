import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type AddressCategory, classifyAddress } from './address.js';
import { LookupUnavailableError, UnsafeUrlError } from './errors.js';

/** What `dns.lookup(host, { all: true })` answers; tests inject a fake so they never touch the network. */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface UrlGuardOptions {
  /** Allow loopback targets (the local stack's webhook receivers). Never in AWS. */
  allowLoopback?: boolean;
  /** Default: the OS resolver through `node:dns` lookup (what an HTTP client would connect to). */
  resolve?: Resolver;
  /** DNS answers slower than this count as "unavailable now". Default 2 s. */
  lookupTimeoutMs?: number;
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

const DEFAULT_LOOKUP_TIMEOUT_MS = 2_000;
const DEFAULT_CACHE_TTL_MS = 60_000;
/** Bounds the verdict cache; a container sees few distinct webhook hosts. */
const MAX_CACHED_HOSTS = 1_000;
/** Answers that prove the name does not exist, as opposed to a resolver that could not answer now. */
const NAME_NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EBADNAME']);

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

const DESCRIBE: Record<Exclude<AddressCategory, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  cgnat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  'ipv4-mapped': 'an IPv4-mapped IPv6 address',
  'ipv4-translated': 'an IPv6 address that embeds an IPv4 address (NAT64/6to4)',
  documentation: 'a documentation address',
  reserved: 'a reserved address',
};

/**
 * SSRF guard for webhook targets (SPEC §2 "Outbound webhooks"): https only, and the host — an IP literal as is,
 * a name through DNS — must not be or resolve to a private, loopback, link-local, CGNAT, multicast, unspecified
 * or otherwise special-purpose address. Every resolved address must pass, because the HTTP client may connect
 * to any of them. Checking at submission gives the client a 400 now; the sender of the webhook must check again
 * right before connecting (DNS answers change: rebinding).
 *
 * @example
 * const guard = createUrlGuard({ allowLoopback: config.allowLoopbackWebhooks });
 * await guard.assertSafe('https://hooks.example.com/wecom'); // throws UnsafeUrlError for https://10.0.0.5/
 */
export function createUrlGuard(opts: UrlGuardOptions = {}): UrlGuard {
  const resolve = opts.resolve ?? systemResolver;
  const timeoutMs = opts.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  const cacheTtlMs = opts.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const now = opts.now ?? Date.now;
  const verdicts = new Map<string, { until: number; unsafe?: { address: string; why: string } }>();

  const check = (url: string, address: string, viaHost?: string): void => {
    const category = classifyAddress(address) ?? 'reserved';
    if (category === 'public' || (category === 'loopback' && opts.allowLoopback)) return;
    const what = `${DESCRIBE[category]} (${address})`;
    throw new UnsafeUrlError(
      viaHost ? `host ${viaHost} resolves to ${what}` : `must not point to ${what}`,
      url,
      address,
    );
  };

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
      const host = parsed.hostname
        .replace(/^\[(.*)\]$/, '$1')
        .replace(/\.$/, '')
        .toLowerCase();
      if (host === '') throw new UnsafeUrlError('must name a host', url);
      if (isIP(host)) return check(url, host);
      // RFC 6761: localhost and *.localhost are loopback whatever a resolver says.
      if (host === 'localhost' || host.endsWith('.localhost')) return check(url, '127.0.0.1', host);

      const cached = verdicts.get(host);
      if (cached && cached.until > now()) {
        if (cached.unsafe) throw new UnsafeUrlError(cached.unsafe.why, url, cached.unsafe.address);
        return;
      }
      const addresses = await resolveWithTimeout(resolve, host, timeoutMs, url);
      let unsafe: { address: string; why: string } | undefined;
      try {
        if (addresses.length === 0) throw new UnsafeUrlError(`host ${host} has no addresses`, url);
        for (const { address } of addresses) check(url, address, host);
      } catch (err) {
        if (err instanceof UnsafeUrlError) unsafe = { address: err.address ?? '', why: err.message };
        throw err;
      } finally {
        if (cacheTtlMs > 0) {
          if (verdicts.size >= MAX_CACHED_HOSTS) verdicts.clear();
          verdicts.set(host, { until: now() + cacheTtlMs, ...(unsafe ? { unsafe } : {}) });
        }
      }
    },
  };
}

async function resolveWithTimeout(
  resolve: Resolver,
  host: string,
  timeoutMs: number,
  url: string,
): Promise<readonly { address: string; family: number }[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LookupUnavailableError(host)), timeoutMs);
  });
  try {
    return await Promise.race([resolve(host), timeout]);
  } catch (err) {
    if (err instanceof LookupUnavailableError) throw err;
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && NAME_NOT_FOUND.has(code)) {
      throw new UnsafeUrlError(`host ${host} does not resolve`, url, undefined, { cause: err });
    }
    throw new LookupUnavailableError(host, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}
