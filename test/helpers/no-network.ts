/**
 * Setup file of the unit project (vitest.config.ts): unit tests open no socket — no listening server, no
 * connection, not even on loopback — and resolve no host name. A test that needs one (an emulator, the WeCom
 * simulator, a local HTTP server, a closed or silent port) belongs in test/integration; this makes such a test
 * fail here with that advice instead of quietly depending on the network stack.
 */
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const refuse = (what: string) => (): never => {
  throw new Error(
    `unit tests open no sockets (${what}); a test that needs the network stack belongs in test/integration`,
  );
};

net.Server.prototype.listen = refuse('net.Server.listen');
net.Socket.prototype.connect = refuse('net.Socket.connect');
dns.lookup = refuse('dns.lookup') as unknown as typeof dns.lookup;
dns.promises.lookup = refuse('dns.promises.lookup');
// Named imports (`import { lookup } from 'node:dns'`) see the replacements too.
syncBuiltinESMExports();
