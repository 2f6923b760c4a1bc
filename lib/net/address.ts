import { BlockList, isIP } from 'node:net';

/**
 * Why an address is not a public unicast one. IANA special-purpose registries:
 * https://www.iana.org/assignments/iana-ipv4-special-registry and …/iana-ipv6-special-registry
 */
export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'ipv4-mapped'
  | 'ipv4-translated'
  | 'documentation'
  | 'reserved';

type Range = readonly [category: Exclude<AddressCategory, 'public'>, prefix: string, bits: number];

const IPV4_RANGES: readonly Range[] = [
  ['unspecified', '0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['private', '10.0.0.0', 8],
  ['cgnat', '100.64.0.0', 10],
  ['loopback', '127.0.0.0', 8],
  ['link-local', '169.254.0.0', 16], // includes the cloud metadata endpoint 169.254.169.254
  ['private', '172.16.0.0', 12],
  ['reserved', '192.0.0.0', 24], // IETF protocol assignments
  ['documentation', '192.0.2.0', 24],
  ['reserved', '192.88.99.0', 24], // 6to4 relay anycast
  ['private', '192.168.0.0', 16],
  ['reserved', '198.18.0.0', 15], // benchmarking
  ['documentation', '198.51.100.0', 24],
  ['documentation', '203.0.113.0', 24],
  ['multicast', '224.0.0.0', 4],
  ['reserved', '240.0.0.0', 4], // includes broadcast 255.255.255.255
];

const IPV6_RANGES: readonly Range[] = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['reserved', '::', 96], // IPv4-compatible (deprecated)
  ['ipv4-translated', '64:ff9b::', 96], // NAT64: would reach the embedded IPv4 address
  ['ipv4-translated', '64:ff9b:1::', 48],
  // SIIT "IPv4-translated" addresses (RFC 2765 §2.1, ::ffff:0:a.b.c.d): a translator would reach the embedded IPv4.
  ['ipv4-translated', '::ffff:0:0:0', 96],
  ['reserved', '100::', 64], // discard-only
  ['reserved', '2001::', 23], // IETF protocol assignments, incl. Teredo 2001::/32
  ['documentation', '2001:db8::', 32],
  ['ipv4-translated', '2002::', 16], // 6to4
  ['documentation', '3fff::', 20],
  ['private', 'fc00::', 7], // unique local
  ['link-local', 'fe80::', 10],
  ['private', 'fec0::', 10], // site-local (deprecated)
  ['multicast', 'ff00::', 8],
];

/**
 * Node's BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses and vice versa, so the mapped range
 * gets a list of its own that is only ever asked about IPv6 input.
 */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

const compile = (ranges: readonly Range[], family: 'ipv4' | 'ipv6') =>
  ranges.map(([category, prefix, bits]) => {
    const list = new BlockList();
    list.addSubnet(prefix, bits, family);
    return { category, list };
  });
const V4 = compile(IPV4_RANGES, 'ipv4');
// Most specific first: ::1 and :: must win over the ::/96 IPv4-compatible block.
const V6 = compile(IPV6_RANGES, 'ipv6');

/**
 * Classifies an IP address literal; anything but `'public'` must not be the target of a server-side request.
 * Returns undefined when `ip` is not an IP address.
 *
 * @example classifyAddress('169.254.169.254') // 'link-local'
 */
export function classifyAddress(ip: string): AddressCategory | undefined {
  // A zone index (fe80::1%eth0) only ever appears on link-local addresses; the prefix decides.
  const address = ip.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return V4.find((r) => r.list.check(address, 'ipv4'))?.category ?? 'public';
  if (family === 6) {
    if (IPV4_MAPPED.check(address, 'ipv6')) return 'ipv4-mapped';
    return V6.find((r) => r.list.check(address, 'ipv6'))?.category ?? 'public';
  }
  return undefined;
}
