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
  /** WeCom refused a group robot's key (93000 bad key or removed from its group, 93004 disabled, 93008 not in the group). */
  | 'RobotConfigError'
  /** A group robot's file or voice was uploaded through its upload_media (a cached media id saves one). */
  | 'RobotUploads'
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
/** The dimension of the per-robot series (the same counts for a group robot's messages). */
export const ROBOT_DIMENSION = 'robot';

/** Whose series a count also goes to: an app's or a group robot's. */
export type MetricDimensions = { readonly app: string } | { readonly robot: string };

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
  /** Per dimension (`app=ops`, `robot=oncall`): its counts. */
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

  /** Adds to a counter; with `app` (or `robot`), to that app's (robot's) series as well. */
  count(name: MetricName, value = 1, dimensions?: MetricDimensions): void {
    this.values.set(name, (this.values.get(name) ?? 0) + value);
    if (!dimensions) return;
    const key =
      'robot' in dimensions ? `${ROBOT_DIMENSION}=${dimensions.robot}` : `${APP_DIMENSION}=${dimensions.app}`;
    const counts = this.byApp.get(key) ?? new Map<MetricName, number>();
    this.byApp.set(key, counts);
    counts.set(name, (counts.get(name) ?? 0) + value);
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
    for (const [key, counts] of this.byApp) {
      for (const [name, value] of counts) out[`${name}{${key}}`] = value;
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
    for (const [key, counts] of byApp) {
      const at = key.indexOf('=');
      const dimension = key.slice(0, at);
      this.emit(now, [dimension], Object.fromEntries(counts), { [dimension]: key.slice(at + 1) });
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
