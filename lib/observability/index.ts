export { createLogger, type Logger, type LogLevel } from './logger.js';
export { METRICS_NAMESPACE, type MetricName, Metrics } from './metrics.js';
export { REDACTED, redact } from './redact.js';
