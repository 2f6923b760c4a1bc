import {
  APP_DIMENSION,
  type MetricName,
  metricsNamespace,
  ROBOT_DIMENSION,
} from '#lib/observability/index.js';

/**
 * The functions' custom metrics, as they emit them through CloudWatch EMF (lib/observability/metrics.ts): names come
 * from the same type, so a renamed metric fails the type-check here instead of leaving an alarm on a metric that
 * no longer exists. Each stage writes to its own namespace (`metricsNamespace(stage)`). Alarms watch the
 * dimensionless series (alarms and graphs match a metric on its exact dimension set); Sent, Failed, Deferred and
 * ConfigError also exist per app (dimension `app`), and Sent, Failed, Deferred and RobotConfigError per group robot
 * (dimension `robot`), for the dashboard.
 */
export { APP_DIMENSION, metricsNamespace, ROBOT_DIMENSION };

export const METRIC_NAMES = {
  sent: 'Sent',
  failed: 'Failed',
  deferred: 'Deferred',
  retried: 'Retried',
  dead: 'Dead',
  getTokenCalls: 'GetTokenCalls',
  /** WeCom answered 45009 (frequency limit): the quota model is off and WeCom is blocking the app. */
  rateLimited: 'RateLimited',
  /** WeCom refused an app's setup: wrong secret (40001), IP not trusted (60020), bad agentid… */
  configError: 'ConfigError',
  /** WeCom refused a group robot's key: 93000 (bad key, or removed from its group), 93004 (disabled), 93008. */
  robotConfigError: 'RobotConfigError',
  /** A function could not re-read the config, or found it invalid, and kept the last good one. */
  configReloadFailed: 'ConfigReloadFailed',
  callbacksStored: 'CallbacksStored',
  callbacksRejected: 'CallbacksRejected',
  webhooksDelivered: 'WebhooksDelivered',
  webhookRetries: 'WebhookRetries',
  /** Webhooks whose retries ran out (the notify DLQ): the business missed a status or an event. */
  webhooksDead: 'WebhooksDead',
  /** A status webhook could not be queued (SQS down at that moment): the business will not hear of it. */
  webhookEnqueueFailed: 'WebhookEnqueueFailed',
} as const satisfies Record<string, MetricName>;
