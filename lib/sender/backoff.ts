import type { RetryPolicy } from '#lib/util/index.js';

// The full-jitter helper lives in lib/util: the webhook retries (lib/webhooks) use it too.
export { fullJitterSeconds, type RetryPolicy } from '#lib/util/index.js';

export const DEFAULT_RETRY: RetryPolicy = { baseSeconds: 5, capSeconds: 600 };
