import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEV_KEY_FILE, readStackInfo } from '#local/local-dir.js';
import { UsageError } from './errors.js';

/** `npm start`'s default API URL (PORT 3000). */
export const DEFAULT_LOCAL_URL = 'http://127.0.0.1:3000';
export const ENV_URL = 'WECOM_GATEWAY_URL';
export const ENV_KEY = 'WECOM_GATEWAY_KEY';

export interface Target {
  url: string;
  key: string;
  /** Where the URL came from, for messages such as "is `npm start` running?". */
  urlSource: 'flag' | 'env' | 'local stack' | 'default';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function parseUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${what} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${what} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  return url;
}

/**
 * The gateway to talk to and the key to use. URL: `--url`, then `WECOM_GATEWAY_URL`, then the running
 * `npm start` in this directory (`.local/stack.json`), then http://127.0.0.1:3000. Key: `--key`, then
 * `WECOM_GATEWAY_KEY`, then — only for a gateway on loopback — `npm start`'s `.local/dev-api-key`, so the dev key
 * is never sent anywhere else.
 */
export async function resolveTarget(
  flags: { url?: string; key?: string },
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Target> {
  const localDir = join(cwd, '.local');
  let url: string;
  let urlSource: Target['urlSource'];
  if (flags.url) [url, urlSource] = [flags.url, 'flag'];
  else if (env[ENV_URL]) [url, urlSource] = [env[ENV_URL], 'env'];
  else {
    const info = await readStackInfo(localDir);
    [url, urlSource] = info ? [info.apiUrl, 'local stack'] : [DEFAULT_LOCAL_URL, 'default'];
  }
  const parsed = parseUrl(url, urlSource === 'env' ? ENV_URL : '--url');
  const key = flags.key || env[ENV_KEY] || (LOOPBACK_HOSTS.has(parsed.hostname) && (await devKey(localDir)));
  if (!key) {
    throw new UsageError(
      `no API key: pass --key or set ${ENV_KEY} (for a local \`npm start\`, run this in its directory to use .local/${DEV_KEY_FILE})`,
    );
  }
  return { url: parsed.href.replace(/\/+$/, ''), key, urlSource };
}

async function devKey(dir: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dir, DEV_KEY_FILE), 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}
