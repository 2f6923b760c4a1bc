export { appendLogContext, currentLogContext, runWithLogContext } from './log-context.js';
export { createLogger, type Logger, type LogLevel } from './logger.js';
export {
  APP_DIMENSION,
  METRICS_NAMESPACE_PREFIX,
  type MetricDimensions,
  type MetricName,
  Metrics,
  type MetricsOptions,
  metricsNamespace,
  ROBOT_DIMENSION,
} from './metrics.js';
export { REDACTED, redact } from './redact.js';
