import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  createUrlGuard,
  LookupUnavailableError,
  type Resolver,
  UnsafeUrlError,
} from '#lib/net/index.js';

/** A resolver double: answers from the table, throws `ENOTFOUND` for anything else, records every call. */
function fakeResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'ipv4-mapped'],
    ['::ffff:8.8.8.8', 'ipv4-mapped'],
    ['64:ff9b::a00:1', 'ipv4-translated'],
    ['64:ff9b:1::a00:1', 'ipv4-translated'],
    ['::ffff:0:a00:1', 'ipv4-translated'], // SIIT ::ffff:0:0:0/96 (sender-review L13: was public)
    ['::ffff:0:7f00:1', 'ipv4-translated'],
    ['::ffff:169.254.169.254', 'ipv4-mapped'],
    ['::7f00:1', 'reserved'], // IPv4-compatible
    ['fd00:ec2::254', 'private'], // the EC2 metadata endpoint over IPv6 (a ULA)
    ['fe80::a9fe:a9fe', 'link-local'],
    ['ff05::1:3', 'multicast'],
    ['100.64.0.0', 'cgnat'],
    ['2002:a00:1::', 'ipv4-translated'],
    ['2001::1', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
  ])('classifies %s as %s', (ip, category) => {
    expect(classifyAddress(ip)).toBe(category);
  });

  it('keeps the neighbours of private ranges public', () => {
    for (const ip of [
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '11.0.0.1',
      '9.255.255.255',
    ])
      expect(classifyAddress(ip), ip).toBe('public');
  });

  it('returns undefined for something that is not an IP address', () => {
    expect(classifyAddress('example.com')).toBeUndefined();
  });
});

describe('createUrlGuard', () => {
  it('accepts an https URL whose host resolves only to public addresses', async () => {
    const dns = fakeResolver({
      'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    });
    await expect(
      createUrlGuard({ resolve: dns.resolve }).assertSafe('https://hooks.example.com/wecom'),
    ).resolves.toBe(undefined);
    expect(dns.calls).toEqual(['hooks.example.com']);
  });

  it('rejects a host when any one of its addresses is private (the client may connect to any)', async () => {
    const dns = fakeResolver({ 'mixed.example.com': ['93.184.215.14', '10.0.0.7'] });
    const err = await rejection(
      createUrlGuard({ resolve: dns.resolve }).assertSafe('https://mixed.example.com/'),
    );
    expect(err).toBeInstanceOf(UnsafeUrlError);
    expect((err as UnsafeUrlError).message).toBe(
      'host mixed.example.com resolves to a private address (10.0.0.7)',
    );
    expect((err as UnsafeUrlError).code).toBe('unsafe_url');
  });

  it.each([
    ['rebind.example.com', ['127.0.0.1'], 'a loopback address'],
    ['meta.example.com', ['169.254.169.254'], 'a link-local address'],
    ['v6.example.com', ['fe80::1'], 'a link-local address'],
    ['ula.example.com', ['fd00::5'], 'a private address'],
    ['mapped.example.com', ['::ffff:10.0.0.1'], 'an IPv4-mapped IPv6 address'],
    ['cgn.example.com', ['100.100.1.1'], 'a carrier-grade NAT address'],
  ])('rejects %s resolving to %s', async (host, addresses, what) => {
    const dns = fakeResolver({ [host]: addresses });
    await expect(createUrlGuard({ resolve: dns.resolve }).assertSafe(`https://${host}/`)).rejects.toThrow(
      what,
    );
  });

  it.each([
    ['https://10.0.0.1/hook', 'a private address (10.0.0.1)'],
    ['https://0x7f.1/hook', 'a loopback address (127.0.0.1)'],
    ['https://2130706433/hook', 'a loopback address (127.0.0.1)'],
    ['https://[::1]:8443/hook', 'a loopback address (::1)'],
    ['https://[::ffff:7f00:1]/hook', 'an IPv4-mapped IPv6 address'],
    ['https://[fe80::1]/hook', 'a link-local address'],
    ['https://0.0.0.0/', 'an unspecified address'],
  ])('checks the IP literal in %s without DNS', async (url, what) => {
    const dns = fakeResolver({});
    await expect(createUrlGuard({ resolve: dns.resolve }).assertSafe(url)).rejects.toThrow(what);
    expect(dns.calls).toEqual([]);
  });

  it('accepts a public IP literal without DNS', async () => {
    const dns = fakeResolver({});
    await createUrlGuard({ resolve: dns.resolve }).assertSafe('https://93.184.215.14/hook');
    expect(dns.calls).toEqual([]);
  });

  it.each(['http://hooks.example.com/', 'ftp://hooks.example.com/', 'not a url', '//hooks.example.com/'])(
    'rejects %s (https only)',
    async (url) => {
      await expect(
        createUrlGuard({ resolve: fakeResolver({}).resolve }).assertSafe(url),
      ).rejects.toBeInstanceOf(UnsafeUrlError);
    },
  );

  it('treats localhost and *.localhost as loopback without asking DNS', async () => {
    const dns = fakeResolver({});
    const guard = createUrlGuard({ resolve: dns.resolve });
    await expect(guard.assertSafe('https://localhost/hook')).rejects.toThrow('a loopback address');
    await expect(guard.assertSafe('https://api.localhost./hook')).rejects.toThrow('a loopback address');
    expect(dns.calls).toEqual([]);
  });

  it('allows loopback — and only loopback — when allowLoopback is set (the local stack)', async () => {
    const dns = fakeResolver({ 'dev.example.com': ['127.0.0.1', '::1'], 'lan.example.com': ['192.168.0.2'] });
    const guard = createUrlGuard({ resolve: dns.resolve, allowLoopback: true });
    await guard.assertSafe('https://127.0.0.1:9000/hook');
    await guard.assertSafe('https://[::1]/hook');
    await guard.assertSafe('https://localhost/hook');
    await guard.assertSafe('https://dev.example.com/hook');
    await expect(guard.assertSafe('https://lan.example.com/')).rejects.toThrow('a private address');
    await expect(guard.assertSafe('https://169.254.169.254/')).rejects.toThrow('a link-local address');
  });

  it('rejects a host that does not exist', async () => {
    await expect(
      createUrlGuard({ resolve: fakeResolver({}).resolve }).assertSafe('https://nowhere.invalid/'),
    ).rejects.toThrow('host nowhere.invalid does not resolve');
  });

  it('rejects a host with no addresses', async () => {
    const dns = fakeResolver({ 'empty.example.com': [] });
    await expect(
      createUrlGuard({ resolve: dns.resolve }).assertSafe('https://empty.example.com/'),
    ).rejects.toThrow('has no addresses');
  });

  it('reports a resolver that cannot answer now as LookupUnavailableError (retry), not as a bad URL', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    const err = await rejection(createUrlGuard({ resolve }).assertSafe('https://flaky.example.com/'));
    expect(err).toBeInstanceOf(LookupUnavailableError);
  });

  it('gives up on a resolver that hangs after lookupTimeoutMs', async () => {
    const resolve: Resolver = () => new Promise(() => undefined);
    const err = await rejection(
      createUrlGuard({ resolve, lookupTimeoutMs: 20 }).assertSafe('https://slow.example.com/'),
    );
    expect(err).toBeInstanceOf(LookupUnavailableError);
  });

  it('reuses a verdict for cacheTtlMs, then asks DNS again', async () => {
    let now = 0;
    const dns = fakeResolver({ 'hooks.example.com': ['93.184.215.14'], 'bad.example.com': ['10.0.0.1'] });
    const guard = createUrlGuard({ resolve: dns.resolve, cacheTtlMs: 1000, now: () => now });

    await guard.assertSafe('https://hooks.example.com/a');
    await guard.assertSafe('https://hooks.example.com/b');
    await expect(guard.assertSafe('https://bad.example.com/')).rejects.toThrow('private');
    await expect(guard.assertSafe('https://bad.example.com/')).rejects.toThrow('private');
    now = 1001;
    await guard.assertSafe('https://hooks.example.com/c');

    expect(dns.calls).toEqual(['hooks.example.com', 'bad.example.com', 'hooks.example.com']);
  });
});
