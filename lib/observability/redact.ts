import { mapStack } from './stack-map.js';

/**
 * Keys whose values are never logged (WeCom secrets and tokens, API keys, signatures, a group robot's key and its
 * webhook URL, which holds the key).
 */
const SECRET_KEY =
  /secret|token|authorization|password|api[-_]?key|signature|encodingaeskey|sha256|^key$|robot[-_]?key|webhook[-_]?url/i;
/** WeCom puts the token, the secret and a robot's key in query strings: `?access_token=…`, `?key=…`. */
const SECRET_QUERY = /([?&](?:access_token|corpsecret|secret|token|key)=)[^&\s"]*/gi;

/** The same inside JSON text (`"access_token":"…"`) and HTTP auth headers (`Bearer …`). */
const SECRET_JSON = /("(?:access_token|corpsecret|secret|token|encodingAESKey|key)"\s*:\s*")[^"]*/gi;
const BEARER = /(Bearer\s+)[^\s"',]+/gi;

export const REDACTED = '[redacted]';

/** Deep-copies a log value, replacing secrets. Errors become plain objects with name, message, code, stack. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[depth]';
  if (typeof value === 'string') {
    return value
      .replace(SECRET_QUERY, `$1${REDACTED}`)
      .replace(SECRET_JSON, `$1${REDACTED}`)
      .replace(BEARER, `$1${REDACTED}`);
  }
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const err = value as Error & { code?: unknown; cause?: unknown };
    return {
      name: err.name,
      message: redact(err.message, depth + 1),
      ...(err.code !== undefined ? { code: err.code } : {}),
      ...(err.stack ? { stack: redact(mapStack(err.stack), depth + 1) } : {}),
      ...(err.cause !== undefined ? { cause: redact(err.cause, depth + 1) } : {}),
    };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // A secret key hides its whole value: an array or object under `tokens`/`secret` is no safer than a string.
    out[k] = SECRET_KEY.test(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1);
  }
  return out;
}
