import { type ApiKeyConfig, type ChannelConfig, DELIVERY_DEFAULTS } from '#lib/config/index.js';
import type { AppPause } from '#lib/store/index.js';
import { errcodeHint } from '#lib/wecom/index.js';
import { AppNotFoundError } from './errors.js';
import type { IngestDeps, QuotaWindowUsage } from './types.js';

/**
 * `active`: messages go out. `paused`: WeCom answered 45009, nothing is sent until `pause.until`. `circuit_open`:
 * WeCom answered a configuration errcode; messages wait for the operator's fix (and fail at
 * `pause.fails_messages_at`). `probing`: the pause ended; the next message tests whether the cause is gone.
 */
export type AppState = 'active' | 'paused' | 'circuit_open' | 'probing';

/** A pause or open circuit as `GET /v1/apps/{app}` and `GET /v1/robots/{robot}` show it. */
export interface PauseView {
  kind: AppPause['kind'];
  errcode: number | null;
  reason: string;
  /** What the operator can do (configuration errors). */
  hint: string | null;
  since: string;
  until: string;
  /** How many times the pause was lengthened in this run. */
  level: number;
  /** Configuration errors: when waiting messages start to fail (`delivery.configErrorHoldSeconds`). */
  fails_messages_at: string | null;
}

/** GET /v1/apps/{app}: what the sender knows about an app right now. Never its secret or token. */
export interface AppStateView {
  app: string;
  state: AppState;
  pause: PauseView | null;
  /** The app's counters in the current windows: WeCom's limit, what the gateway allows itself, what is used. */
  quota: { window: string; limit: number; allowed: number; used: number; resets_at: string }[];
  token: {
    fetched_at: string | null;
    age_seconds: number | null;
    expires_in_seconds: number | null;
    /** The last failed gettoken while it still holds calls back (no gettoken before `retry_at`). */
    last_error: { errcode: number | null; class: string; failures: number; retry_at: string } | null;
  };
}

export const iso = (ms: number): string => new Date(ms).toISOString();

export function stateOf(p: AppPause | undefined, now: number): AppState {
  if (!p) return 'active';
  if (p.untilMs <= now) return 'probing';
  return p.kind === 'rate_limited' ? 'paused' : 'circuit_open';
}

/** The app, if the key may read it: 404 otherwise (the same answer for apps that do not exist). */
export function appFor(deps: IngestDeps, apiKey: ApiKeyConfig, app: string) {
  const config = apiKey.apps.includes(app) ? deps.config.apps[app] : undefined;
  if (!config) throw new AppNotFoundError(`no app ${app.slice(0, 64)}`);
  return config;
}

/**
 * GET /v1/apps/{app}: pause or circuit and why, quota use in the current windows, the token's age.
 *
 * @example const view = await getAppState(deps, apiKey, 'ops'); // { app: 'ops', state: 'active', … }
 */
export async function getAppState(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  app: string,
): Promise<AppStateView> {
  const config = appFor(deps, apiKey, app);
  const now = (deps.now ?? Date.now)();
  const [pause, quota, token] = await Promise.all([
    deps.pauses.get(app),
    deps.quotaUsage.usage(app, now),
    deps.tokens.describe(config),
  ]);
  return {
    app,
    state: stateOf(pause, now),
    pause: pause ? pauseView(pause, config) : null,
    quota: quota.map(quotaView),
    token: {
      fetched_at: token.fetchedAtMs !== undefined ? iso(token.fetchedAtMs) : null,
      age_seconds: token.fetchedAtMs !== undefined ? Math.round((now - token.fetchedAtMs) / 1000) : null,
      expires_in_seconds:
        token.expiresAtMs !== undefined ? Math.max(0, Math.round((token.expiresAtMs - now) / 1000)) : null,
      last_error: token.failure
        ? {
            errcode: token.failure.errcode ?? null,
            class: token.failure.errclass,
            failures: token.failure.count,
            retry_at: iso(token.failure.retryAtMs),
          }
        : null,
    },
  };
}

/** A pause as the API shows it; `config` tells how long a configuration error's messages wait. */
export function pauseView(pause: AppPause, config: ChannelConfig): PauseView {
  const configErrorWaitMs =
    (config.delivery?.configErrorHoldSeconds ?? DELIVERY_DEFAULTS.configErrorHoldSeconds) * 1000;
  return {
    kind: pause.kind,
    errcode: pause.errcode ?? null,
    reason: pause.reason,
    hint: pause.errcode !== undefined ? (errcodeHint(pause.errcode) ?? null) : null,
    since: iso(pause.sinceMs),
    until: iso(pause.untilMs),
    level: pause.level,
    fails_messages_at: pause.kind === 'config_error' ? iso(pause.sinceMs + configErrorWaitMs) : null,
  };
}

/** A quota window as the API shows it. */
export const quotaView = (q: QuotaWindowUsage) => ({
  window: q.window,
  limit: q.limit,
  allowed: q.allowed,
  used: q.used,
  resets_at: iso(q.resetsAtMs),
});

/** One lane's depth as GET /v1/apps shows it (SQS's approximate counts). */
export interface LaneDepthView {
  lane: string;
  waiting: number;
  in_flight: number;
  delayed: number;
  dead: number | null;
}

/**
 * GET /v1/apps: the key itself (its name and scopes, so a client such as the console offers only the actions it may
 * take), the apps it may use, each with its state (one read per app), and for a key with the `admin` scope the
 * lanes' depths. Only for admins: the lanes are shared by every app, so their depth tells of other apps' traffic.
 */
export async function listApps(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
): Promise<{
  key: { name: string; scopes: readonly string[] };
  apps: { app: string; state: AppState }[];
  queues?: LaneDepthView[];
}> {
  const now = (deps.now ?? Date.now)();
  const names = apiKey.apps.filter((a) => deps.config.apps[a] !== undefined);
  const admin = apiKey.scopes.includes('admin') && deps.queueDepths !== undefined;
  const [pauses, depths] = await Promise.all([
    Promise.all(names.map((a) => deps.pauses.get(a))),
    admin ? deps.queueDepths?.depths() : undefined,
  ]);
  return {
    key: { name: apiKey.name, scopes: apiKey.scopes },
    apps: names.map((app, i) => ({ app, state: stateOf(pauses[i], now) })),
    ...(depths
      ? {
          queues: depths.map((d) => ({
            lane: d.lane,
            waiting: d.waiting,
            in_flight: d.inFlight,
            delayed: d.delayed,
            dead: d.dead ?? null,
          })),
        }
      : {}),
  };
}
