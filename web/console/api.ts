/** The gateway's v1 API, on the origin the console is served from, with the tab's API key as the bearer token. */
import { apiKey } from './session.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** Called on a 401: the key was revoked or mistyped; the app signs out and shows the sign-in form. */
let onUnauthorized: () => void = () => {};
export const whenUnauthorized = (f: () => void): void => {
  onUnauthorized = f;
};

/** `key`: try this key instead of the tab's (sign-in checks a key before keeping it). */
export async function api<T>(
  path: string,
  init: { method?: 'GET' | 'POST' | 'DELETE'; body?: unknown; key?: string } = {},
): Promise<T> {
  const key = init.key ?? apiKey();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network', 'The gateway did not answer. Check your connection and try again.');
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: { code?: string; message?: string; details?: ApiError['details'] } })
    ?.error;
  const failure = new ApiError(
    response.status,
    error?.code ?? `http_${response.status}`,
    error?.message ?? `${response.status} ${response.statusText}`,
    Array.isArray(error?.details) ? error.details : [],
  );
  if (response.status === 401 && init.key === undefined) onUnauthorized();
  throw failure;
}
