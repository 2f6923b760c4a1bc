/** Exponential backoff bounds: the n-th retry waits at most min(cap, base × 2^(n−1)) seconds. */
export interface RetryPolicy {
  baseSeconds: number;
  capSeconds: number;
}

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
