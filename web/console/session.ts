/**
 * The API key of this tab. sessionStorage only: it survives a reload but not the tab, is never written to
 * localStorage, a cookie or a URL, and no request carries it except as the API's bearer token.
 */
const STORAGE_KEY = 'wecom-gateway.console.apiKey';

let memory: string | undefined;

export function apiKey(): string | undefined {
  if (memory) return memory;
  try {
    memory = sessionStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    // Storage can be blocked (privacy settings): the key then lives in this page's memory only.
  }
  return memory;
}

export function signIn(key: string): void {
  memory = key;
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // As above: memory only.
  }
}

export function signOut(): void {
  memory = undefined;
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing was stored.
  }
}
