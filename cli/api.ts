import type { AppStateView, ReachView, RobotStateView } from './domain.js';
import { ApiError, UnreachableError } from './errors.js';
import { PACKED } from './packaging.js';
import type { Target } from './target.js';

/** GET /v1/messages/{id} as documented in docs/api.md; fields a newer or older gateway lacks stay optional. */
export interface MessageStatus {
  id: string;
  app?: string;
  status: string;
  priority?: string;
  attempts?: number;
  created_at?: string;
  updated_at?: string;
  sent_at?: string | null;
  /** A scheduled message: when it is due, when it is released, and what scheduled it. */
  send_at?: string | null;
  release_at?: string | null;
  scheduled_by?: 'send_at' | 'quiet_hours' | null;
  metadata?: Record<string, string>;
  wecom?: {
    msgid?: string;
    invaliduser?: string;
    invalidparty?: string;
    invalidtag?: string;
    unlicenseduser?: string;
  } | null;
  error?: { code?: string; message?: string; wecom_errcode?: number } | null;
  events?: { at: string; type: string; detail?: string }[];
}

/** One entry of GET /v1/messages as documented in docs/api.md. */
export interface MessageSummary {
  id: string;
  /** The channel: an app's messages name `app`, a group robot's `robot`. */
  app?: string;
  robot?: string;
  status: string;
  priority?: string;
  msgtype?: string;
  touser?: string[];
  toparty?: string[];
  totag?: string[];
  recipients_omitted?: number;
  attempts?: number;
  created_at?: string;
  updated_at?: string;
  sent_at?: string | null;
}

export interface MessagePage {
  messages: MessageSummary[];
  next_cursor: string | null;
}

/** GET /v1/messages/{id}/webhooks as documented in docs/api.md. */
export interface WebhookDeliveries {
  deliveries: {
    id: string;
    event: string;
    target: string;
    status: string;
    attempts: {
      at: string;
      attempt?: number;
      outcome?: string;
      status_code?: number;
      latency_ms?: number;
      error?: string;
    }[];
    next_attempt_at?: string;
  }[];
  truncated?: boolean;
}

/** GET /v1/apps/{app} as documented in docs/api.md: the gateway's own type. */
export type AppStatus = AppStateView;

/** GET /v1/robots/{robot} as documented in docs/api.md: the gateway's own type. */
export type RobotStatus = RobotStateView;

/** GET /v1/apps/{app}/reach as documented in docs/api.md: the gateway's own type. */
export type Reach = ReachView;

/** The recipients to ask GET /v1/apps/{app}/reach about. */
export interface ReachQuery {
  touser: readonly string[];
  toparty: readonly string[];
  totag: readonly string[];
}

export interface Accepted {
  id: string;
  status: string;
  /** Long content split on request: how many parts. */
  parts?: number;
  /** Scheduled: when it is due, and when it is released (with its share of the spread). */
  send_at?: string;
  release_at?: string;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** A small client for the gateway's public HTTP API (the same API every other client uses). */
export class GatewayApi {
  constructor(
    private readonly target: Pick<Target, 'url' | 'key' | 'urlSource'>,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  send(body: Record<string, unknown>, idempotencyKey?: string): Promise<Accepted> {
    return this.call<Accepted>('POST', '/v1/messages', body, {
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    });
  }

  status(id: string): Promise<MessageStatus> {
    return this.call<MessageStatus>('GET', `/v1/messages/${encodeURIComponent(id)}`);
  }

  /** DELETE /v1/messages/{id}: takes back a message not yet sent. */
  cancel(id: string): Promise<{ id: string; status: string }> {
    return this.call('DELETE', `/v1/messages/${encodeURIComponent(id)}`);
  }

  webhooks(id: string): Promise<WebhookDeliveries> {
    return this.call<WebhookDeliveries>('GET', `/v1/messages/${encodeURIComponent(id)}/webhooks`);
  }

  /** One page of GET /v1/messages; `query` holds its parameters (app, status, touser, …, cursor). */
  messages(query: Record<string, string>): Promise<MessagePage> {
    const qs = new URLSearchParams(query).toString();
    return this.call<MessagePage>('GET', `/v1/messages${qs ? `?${qs}` : ''}`);
  }

  apps(): Promise<{ apps: { app: string; state: string }[] }> {
    return this.call('GET', '/v1/apps');
  }

  app(name: string): Promise<AppStatus> {
    return this.call<AppStatus>('GET', `/v1/apps/${encodeURIComponent(name)}`);
  }

  robots(): Promise<{ robots: { robot: string; state: string }[] }> {
    return this.call('GET', '/v1/robots');
  }

  robot(name: string): Promise<RobotStatus> {
    return this.call<RobotStatus>('GET', `/v1/robots/${encodeURIComponent(name)}`);
  }

  /** Which of these recipients are outside the app's visible range, as the gateway reads it from WeCom. */
  reach(name: string, ids: ReachQuery): Promise<Reach> {
    const query = new URLSearchParams();
    for (const field of ['touser', 'toparty', 'totag'] as const)
      if (ids[field].length > 0) query.set(field, ids[field].join('|'));
    return this.call<Reach>('GET', `/v1/apps/${encodeURIComponent(name)}/reach?${query}`);
  }

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const url = `${this.target.url}${path}`;
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers: {
          authorization: `Bearer ${this.target.key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new UnreachableError(this.target.url, this.reason(err), { cause: err });
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.ok && json !== undefined) return json as T;
    const error = (json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
      ?.error;
    if (error && typeof error.code === 'string') {
      throw new ApiError(
        res.status,
        error.code,
        typeof error.message === 'string' ? error.message : error.code,
        Array.isArray(error.details) ? error.details : [],
      );
    }
    // API Gateway's own answers (429 throttling, 403 from a wrong stage path) carry `{"message": …}` or nothing.
    const message = (json as { message?: unknown } | undefined)?.message;
    throw new ApiError(
      res.status,
      `http_${res.status}`,
      typeof message === 'string' ? message : `HTTP ${res.status} ${res.statusText} from ${url}`,
    );
  }

  private reason(err: unknown): string {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const name = (err as { name?: string }).name;
    let reason =
      name === 'TimeoutError'
        ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
        : cause?.code === 'ECONNREFUSED'
          ? 'connection refused'
          : (cause?.message ?? (err instanceof Error ? err.message : String(err)));
    if (this.target.urlSource === 'default') {
      reason += PACKED
        ? ' (no gateway at the default address: pass --url or set WECOM_GATEWAY_URL)'
        : ' (is `npm start` running? otherwise pass --url)';
    }
    return reason;
  }
}
