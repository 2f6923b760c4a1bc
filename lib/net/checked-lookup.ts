import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type AddressCategory, classifyAddress } from './address.js';
import { LookupUnavailableError, UnsafeUrlError } from './errors.js';

/** What `dns.lookup(host, { all: true })` answers; tests inject a fake so they never touch the network. */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface CheckedLookupOptions {
  /** Allow loopback addresses (the local stack's webhook receivers). Never in AWS. */
  allowLoopback?: boolean;
  /** Default: the OS resolver through `node:dns` lookup (what an HTTP client would connect to). */
  resolve?: Resolver;
  /** DNS answers slower than this count as "unavailable now". Default 2 s. */
  lookupTimeoutMs?: number;
}

const DEFAULT_LOOKUP_TIMEOUT_MS = 2_000;
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
  'ipv4-translated': 'an IPv6 address that embeds an IPv4 address (NAT64/SIIT/6to4)',
  documentation: 'a documentation address',
  reserved: 'a reserved address',
};

/** A URL host as a bare, lower-case name or IP: no IPv6 brackets, no trailing dot. */
export function normaliseHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Resolves `host` once and returns its addresses only if every one of them may be the target of a server-side
 * request (a client may connect to any of them). An IP literal is checked as is; `localhost` and `*.localhost`
 * are loopback whatever a resolver says (RFC 6761). Nothing is cached: callers that connect must connect to an
 * address this returned, so a second DNS answer (rebinding) never reaches a socket.
 *
 * @throws UnsafeUrlError (never connect) or LookupUnavailableError (DNS could not answer now: retry later)
 * @example const [address] = await checkedAddresses('hooks.example.com', url); // then connect to `address`
 */
export async function checkedAddresses(
  host: string,
  url: string,
  opts: CheckedLookupOptions = {},
): Promise<string[]> {
  if (host === '') throw new UnsafeUrlError('must name a host', url);
  if (isIP(host)) {
    assertAllowedAddress(host, url, opts);
    return [host];
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    assertAllowedAddress('127.0.0.1', url, opts, host);
    return ['127.0.0.1'];
  }
  const answers = await resolveWithTimeout(
    opts.resolve ?? systemResolver,
    host,
    opts.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS,
    url,
  );
  if (answers.length === 0) throw new UnsafeUrlError(`host ${host} has no addresses`, url);
  for (const { address } of answers) assertAllowedAddress(address, url, opts, host);
  return answers.map(({ address }) => address);
}

/** Throws unless `address` is public (or loopback with `allowLoopback`). */
export function assertAllowedAddress(
  address: string,
  url: string,
  opts: Pick<CheckedLookupOptions, 'allowLoopback'>,
  viaHost?: string,
): void {
  const category = classifyAddress(address) ?? 'reserved';
  if (category === 'public' || (category === 'loopback' && opts.allowLoopback)) return;
  const what = `${DESCRIBE[category]} (${address})`;
  throw new UnsafeUrlError(
    viaHost ? `host ${viaHost} resolves to ${what}` : `must not point to ${what}`,
    url,
    address,
  );
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
