export interface RetryPolicy {
  baseSeconds: number;
  capSeconds: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseSeconds: 5, capSeconds: 600 };

/**
 * "Full jitter" backoff (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/): uniform in
 * [0, min(cap, base × 2^(attempt − 1))], at least 1 s so a retry never spins.
 */
export function fullJitterSeconds(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.capSeconds, policy.baseSeconds * 2 ** Math.max(0, attempt - 1));
  return Math.max(1, Math.round(random() * ceiling));
}
