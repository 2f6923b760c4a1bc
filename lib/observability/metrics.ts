export const METRICS_NAMESPACE = 'WecomGateway';

export type MetricName =
  | 'Accepted'
  | 'Rejected'
  | 'Sent'
  | 'Failed'
  | 'Dead'
  | 'Deferred'
  | 'Retried'
  | 'RateLimited'
  | 'GetTokenCalls'
  | 'DuplicateSuppressed'
  | 'QuotaUtilisation'
  /** A re-read of the config failed or found it invalid; the last good config stayed in force. */
  | 'ConfigReloadFailed';

/**
 * Counters flushed as one CloudWatch Embedded Metric Format line per invocation
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * no PutMetricData calls, no extra latency. Dimensionless so the alarms in infra/ match them exactly.
 */
export class Metrics {
  private values = new Map<MetricName, number>();
  private maxima = new Map<MetricName, number>();
  constructor(
    private readonly service: string,
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {}

  count(name: MetricName, value = 1): void {
    this.values.set(name, (this.values.get(name) ?? 0) + value);
  }

  /** Records a gauge; the flushed value is the maximum seen since the last flush. */
  gauge(name: MetricName, value: number): void {
    this.maxima.set(name, Math.max(this.maxima.get(name) ?? Number.NEGATIVE_INFINITY, value));
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.values, ...this.maxima]);
  }

  flush(now = Date.now()): void {
    const values = this.snapshot();
    const names = Object.keys(values);
    this.values.clear();
    this.maxima.clear();
    if (names.length === 0) return;
    const emf = {
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [
          {
            Namespace: METRICS_NAMESPACE,
            Dimensions: [[]],
            Metrics: names.map((n) => ({ Name: n, Unit: n === 'QuotaUtilisation' ? 'Percent' : 'Count' })),
          },
        ],
      },
      service: this.service,
      ...values,
    };
    this.write(JSON.stringify(emf));
  }
}
