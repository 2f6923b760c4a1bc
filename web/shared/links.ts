/** Links taken from message content. Pure (no DOM): the unit tests run it under node. */

/**
 * Links from content are followed only when they are absolute http(s) URLs; `javascript:` and friends, and relative
 * links (a WeCom client has no page to resolve them against), become plain text.
 */
export function safeHref(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}
