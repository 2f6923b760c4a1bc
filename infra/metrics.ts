import { METRICS_NAMESPACE, type MetricName } from '#lib/observability/index.js';

/**
 * The sender's custom metrics, as it emits them through CloudWatch EMF (lib/observability/metrics.ts): names come
 * from the same type, so a renamed metric fails the type-check here instead of leaving an alarm on a metric that
 * no longer exists. They are emitted without dimensions, because alarms and graphs match a metric on its exact
 * dimension set.
 */
export { METRICS_NAMESPACE };

export const METRIC_NAMES = {
  sent: 'Sent',
  failed: 'Failed',
  deferred: 'Deferred',
  retried: 'Retried',
  dead: 'Dead',
  getTokenCalls: 'GetTokenCalls',
  /** WeCom answered 45009 (frequency limit): the quota model is off and WeCom is blocking the app. */
  rateLimited: 'RateLimited',
} as const satisfies Record<string, MetricName>;
