/** CloudWatch namespace prefix of the gateway's own metrics; each stage writes to its own namespace. */
export const METRICS_NAMESPACE_PREFIX = 'WecomGateway';

/**
 * `WecomGateway/<stage>`: a dev stack and a prod stack in one account and region never write the same series, so a
 * dev error cannot fire a prod alarm. The local stack uses the stage `local`.
 */
export const metricsNamespace = (stage: string): string => `${METRICS_NAMESPACE_PREFIX}/${stage}`;

export type MetricName =
  | 'Accepted'
  | 'Rejected'
  | 'Sent'
  | 'Failed'
  | 'Dead'
  | 'Expired'
  | 'Deferred'
  | 'Retried'
  | 'RateLimited'
  | 'GetTokenCalls'
  | 'DuplicateSuppressed'
  | 'QuotaUtilisation'
  /** WeCom refused a call because of the app's setup (40001 secret, 60020 trusted IP, 301002 agentid…). */
  | 'ConfigError'
  /** A re-read of the config failed or found it invalid; the last good config stayed in force. */
  | 'ConfigReloadFailed'
  | 'CallbacksStored'
  | 'CallbacksDuplicate'
  | 'CallbacksRejected'
  | 'WebhooksDelivered'
  | 'WebhookRetries'
  | 'WebhooksDead'
  | 'WebhooksRefused'
  | 'WebhookEnqueueFailed'
  /** A message went out in parts: those with a quota slot now, the others later. */
  | 'SentPart';

/** The dimension of the per-app series (Sent, Failed, Deferred, ConfigError by app). */
export const APP_DIMENSION = 'app';

export interface MetricsOptions {
  /** Default: {@link metricsNamespace} of `local`. */
  readonly namespace?: string;
  readonly write?: (line: string) => void;
}

const unitOf = (name: string) => (name === 'QuotaUtilisation' ? 'Percent' : 'Count');

/**
 * Counters flushed as CloudWatch Embedded Metric Format lines, once per invocation
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * no PutMetricData calls, no extra latency. Every metric goes into the stage's namespace without dimensions (the
 * series the alarms in infra/ watch); a count given an app also goes into a second series with the `app`
 * dimension, one EMF line per app (an EMF line holds one value per metric).
 */
export class Metrics {
  private values = new Map<MetricName, number>();
  private maxima = new Map<MetricName, number>();
  private byApp = new Map<string, Map<MetricName, number>>();
  private readonly namespace: string;
  private readonly write: (line: string) => void;

  constructor(
    private readonly service: string,
    opts: MetricsOptions | ((line: string) => void) = {},
  ) {
    const { namespace, write } = typeof opts === 'function' ? { write: opts, namespace: undefined } : opts;
    this.namespace = namespace ?? metricsNamespace('local');
    this.write = write ?? ((line: string) => process.stdout.write(`${line}\n`));
  }

  /** Adds to a counter; with `app`, to that app's series as well. */
  count(name: MetricName, value = 1, dimensions?: { readonly app: string }): void {
    this.values.set(name, (this.values.get(name) ?? 0) + value);
    if (!dimensions) return;
    const app = this.byApp.get(dimensions.app) ?? new Map<MetricName, number>();
    this.byApp.set(dimensions.app, app);
    app.set(name, (app.get(name) ?? 0) + value);
  }

  /** Records a gauge; the flushed value is the maximum seen since the last flush. */
  gauge(name: MetricName, value: number): void {
    this.maxima.set(name, Math.max(this.maxima.get(name) ?? Number.NEGATIVE_INFINITY, value));
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.values, ...this.maxima]);
  }

  /** The per-app counters, as `name{app=…}` → value (tests, benchmarks). */
  snapshotDimensioned(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [app, counts] of this.byApp) {
      for (const [name, value] of counts) out[`${name}{${APP_DIMENSION}=${app}}`] = value;
    }
    return out;
  }

  flush(now = Date.now()): void {
    const values = this.snapshot();
    const byApp = [...this.byApp];
    this.values.clear();
    this.maxima.clear();
    this.byApp.clear();
    if (Object.keys(values).length > 0) this.emit(now, [], values, {});
    for (const [app, counts] of byApp) {
      this.emit(now, [APP_DIMENSION], Object.fromEntries(counts), { [APP_DIMENSION]: app });
    }
  }

  private emit(
    now: number,
    dimensions: string[],
    values: Record<string, number>,
    dimensionValues: Record<string, string>,
  ): void {
    const emf = {
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [
          {
            Namespace: this.namespace,
            Dimensions: [dimensions],
            Metrics: Object.keys(values).map((n) => ({ Name: n, Unit: unitOf(n) })),
          },
        ],
      },
      service: this.service,
      ...dimensionValues,
      ...values,
    };
    this.write(JSON.stringify(emf));
  }
}
