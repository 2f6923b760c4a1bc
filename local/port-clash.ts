import type { StackInfo } from './local-dir.js';

/** A listen error of a port already taken (Node's `EADDRINUSE`, with the address and port it tried). */
export function isPortClash(err: unknown): err is NodeJS.ErrnoException & { port: number; address?: string } {
  return (
    err instanceof Error &&
    (err as NodeJS.ErrnoException).code === 'EADDRINUSE' &&
    typeof (err as { port?: unknown }).port === 'number'
  );
}

/**
 * What `npm start` says when a port it needs is taken: which port and what for, who holds it when that is another
 * `npm start` of this checkout (its `.local/stack.json`), and the fix — instead of Node's stack trace.
 */
export function portClashMessage(o: {
  port: number;
  address?: string | undefined;
  apiPort: number;
  running?: StackInfo | undefined;
}): string {
  const what =
    o.port === o.apiPort
      ? 'the API'
      : o.port === o.apiPort + 1
        ? 'the WeCom simulator (PORT + 1)'
        : 'a local emulator';
  const where = `${o.address ?? '127.0.0.1'}:${o.port}`;
  const free = o.apiPort + 2;
  const holder = o.running
    ? `Another \`npm start\` of this checkout holds it (pid ${o.running.pid}, API ${o.running.apiUrl}): stop it with Ctrl-C in its terminal or \`kill ${o.running.pid}\`, or`
    : `Another program listens there (\`ss -ltnp 'sport = :${o.port}'\` or \`lsof -i :${o.port}\` shows which): stop it, or`;
  return `port ${o.port} for ${what} is in use (${where}). ${holder} start on other ports: PORT=${free} npm start (the simulator takes PORT + 1; PORT=0 picks free ports).`;
}
