import { createHash } from 'node:crypto';
import { type AppConfig, type ChannelConfig, DELIVERY_DEFAULTS } from '#lib/config/index.js';
import { channelKey, channelLabel } from '#lib/messages/index.js';
import { WECOM_WINDOWS } from '#lib/quota/index.js';
import type { AppPause } from '#lib/store/index.js';
import { errcodeHint, WecomApiError, WecomError } from '#lib/wecom/index.js';
import { defer, fail, scheduleRetry } from './outcomes.js';
import { DEFAULT_CONFIG_STEPS_MS, type Gate, nextPause, type PauseSchedule } from './pause.js';
import {
  type AttemptFailure,
  type ChannelAttempt,
  dimensionsOf,
  nowOf,
  type Outcome,
  type PauseTarget,
  type Received,
  type SenderDeps,
} from './types.js';

/**
 * What the sender does with a failed send, and with the messages of an app WeCom refuses: after 45009 (a pause that
 * grows) and after a configuration errcode (a circuit the operator must close: messages wait
 * `delivery.configErrorHoldSeconds`, then fail) the app is paused. One probe at a time tests whether the cause is
 * gone (lib/sender `PauseCache`). The actions themselves (defer, fail, retry) are outcomes.ts.
 */

/** A fingerprint of what the operator can change to fix a configuration error; never the secret itself. */
export const configHashOf = (app: AppConfig): string =>
  createHash('sha256').update(`${app.corpId}\n${app.agentId}\n${app.secret}`).digest('hex').slice(0, 16);

export const scheduleOf = (deps: SenderDeps): PauseSchedule => ({
  rateLimitFirstMs: deps.rateLimitPauseMs ?? 60_000,
  configStepsMs: deps.configProbeMs ?? DEFAULT_CONFIG_STEPS_MS,
  windows: deps.windows ?? WECOM_WINDOWS,
});

/** How long the messages of an app (robot) with a configuration error wait for the fix before they fail. */
export const configErrorWaitMs = (config: ChannelConfig): number =>
  (config.delivery?.configErrorHoldSeconds ?? DELIVERY_DEFAULTS.configErrorHoldSeconds) * 1000;

/** An app's pause target: kept under the app's name, its fix fingerprinted over corpId, agentId and secret. */
export const appTarget = (name: string, app: AppConfig): PauseTarget => ({
  channel: { kind: 'app', name },
  configHash: configHashOf(app),
  configErrorWaitMs: configErrorWaitMs(app),
});

/** What a client reads in the deferral event: why, and until when. */
function describe(p: AppPause, target: PauseTarget): string {
  if (p.kind === 'rate_limited')
    return `WeCom rate limit (45009): ${target.channel.kind} paused until ${new Date(p.untilMs).toISOString()}`;
  const failAt = new Date(p.sinceMs + target.configErrorWaitMs).toISOString();
  return `WeCom configuration error ${p.errcode ?? ''} (${p.reason}): waiting for the fix, failing at ${failAt}`;
}

/** The pause's reason: the operator's hint for the errcode (with the IP WeCom names for 60020), or WeCom's words. */
const reasonOf = (err: WecomApiError): string =>
  errcodeHint(err.errcode, err.errmsg) ?? `WeCom ${err.api} errcode ${err.errcode}: ${err.errmsg}`;

/** A message that finds its app paused: wait (deferred), or fail once a configuration error outlasted its wait. */
export async function waitOutPause(
  c: Received & Pick<ChannelAttempt, 'target'>,
  gate: Extract<Gate, { state: 'paused' }>,
): Promise<Outcome> {
  const p = gate.pause;
  if (p.kind === 'config_error') {
    const failAt = p.sinceMs + c.target.configErrorWaitMs;
    if (nowOf(c.deps) >= failAt) return failForConfig(c, p);
    return defer(c, { untilMs: Math.min(gate.retryAtMs, failAt), reason: describe(p, c.target) });
  }
  return defer(c, { untilMs: gate.retryAtMs, reason: describe(p, c.target) });
}

/**
 * WeCom answered 45009 or a configuration errcode (for this send, or remembered from a failed `gettoken`): pause
 * the app (or lengthen its pause, if this was the probe), then let this message wait out the pause like any other.
 */
export async function pauseForError(a: ChannelAttempt, err: WecomApiError): Promise<Outcome> {
  const { deps, target, gate, log } = a;
  const { channel } = target;
  const key = channelKey(channel);
  const kind: AppPause['kind'] = err.errclass === 'rateLimited' ? 'rate_limited' : 'config_error';
  const now = nowOf(deps);
  if (kind === 'config_error') {
    deps.metrics.count(
      channel.kind === 'robot' ? 'RobotConfigError' : 'ConfigError',
      1,
      dimensionsOf(channel),
    );
  } else deps.metrics.count('RateLimited');
  // The pause as it stands now: the gate's, or a fresh read (another container may have paused the app already).
  const current = gate.state === 'closed' ? await deps.pauses.current(key, { fresh: true }) : gate.pause;
  const next = nextPause(
    current,
    {
      kind,
      reason: reasonOf(err),
      errcode: err.errcode,
      ...(kind === 'config_error' ? { configHash: target.configHash } : {}),
    },
    now,
    scheduleOf(deps),
  );
  const pause = next ?? current;
  if (next) {
    log.warn(
      kind === 'rate_limited'
        ? `WeCom rate limit: ${channel.kind} paused`
        : `WeCom configuration error: ${channel.kind} paused`,
      {
        errcode: err.errcode,
        untilMs: next.untilMs,
        level: next.level,
      },
    );
    await deps.pauses
      .paused(key, next)
      .catch((e: unknown) =>
        log.error('could not record the pause; other containers learn it from WeCom', { err: e }),
      );
  }
  if (!pause)
    return defer(a, { untilMs: now + scheduleOf(deps).rateLimitFirstMs, reason: `errcode ${err.errcode}` });
  return waitOutPause(a, { state: 'paused', pause, retryAtMs: pause.untilMs });
}

async function failForConfig(c: Received & Pick<ChannelAttempt, 'target'>, p: AppPause): Promise<Outcome> {
  const minutes = Math.round(c.target.configErrorWaitMs / 60_000);
  await fail(c, {
    code: 'wecom_config_error',
    message: `${p.reason}; the ${channelLabel(c.target.channel)} was paused since ${new Date(p.sinceMs).toISOString()} (${minutes} min, delivery.configErrorHoldSeconds) without a fix`,
    ...(p.errcode !== undefined ? { wecom_errcode: p.errcode } : {}),
  });
  return 'ack';
}

/**
 * A failed send (or token): pause the app on 45009 or a configuration errcode, fail on a permanent errcode, retry
 * otherwise.
 */
export async function handleSendError(a: ChannelAttempt, failure: AttemptFailure): Promise<Outcome> {
  const { deps, target, gate, log } = a;
  const err = failure.error;
  if (err instanceof WecomApiError && (err.errclass === 'rateLimited' || err.errclass === 'config')) {
    return pauseForError(a, err);
  }
  if (gate.state === 'probe') {
    // The probe learned nothing about the pause's cause: the next message probes.
    await deps.pauses
      .probeInconclusive(channelKey(target.channel), gate.pause)
      .catch((e: unknown) => log.warn('could not release the probe; its lease runs out', { err: e }));
  }
  if (err instanceof WecomApiError && err.errclass === 'permanent') {
    await fail(a, {
      code: 'wecom_rejected',
      message: errcodeHint(err.errcode, err.errmsg) ?? `WeCom rejected the message: ${err.errmsg}`,
      wecom_errcode: err.errcode,
    });
    log.warn('WeCom rejected the message permanently', { errcode: err.errcode });
    return 'ack';
  }
  // Retryable, a token error that persisted after one refresh, no answer, or not WeCom at all (e.g. DynamoDB failing
  // under the token cache or the quota counters).
  if (!(err instanceof WecomError)) log.error('unexpected error, message will be retried', { err });
  return scheduleRetry(a, failure);
}
