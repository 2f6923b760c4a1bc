import { channelConfig } from '#lib/config/index.js';
import { channelOf } from '#lib/messages/index.js';
import {
  changes,
  type FailedAttempt,
  inDoubtAfter,
  type QueuedMessage,
  type QueuedPart,
  segmentLabel,
} from '#lib/model/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/index.js';
import { heldDelaySeconds, type NeverDecision, type WaitDecision } from '#lib/quota/index.js';
import { TokenUnavailableError, WecomApiError } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import { type Deadline, deadlineOf } from './deadline.js';
import {
  type AttemptFailure,
  dimensionsOf,
  nowOf,
  type Outcome,
  type Received,
  type SenderDeps,
} from './types.js';

/** The message's deadline under its channel's delivery budget (the app's or the robot's). */
const deadlineFor = (deps: SenderDeps, msg: QueuedMessage): Deadline =>
  deadlineOf(msg, channelConfig(deps.config, channelOf(msg)));

/*
 * The actions a received copy can end in: defer, retry, fail, end at its deadline. Which one a failed send takes is
 * the pause policy's choice (pause-policy.ts), which imports these; nothing here decides it.
 */

/** How long a deferred copy waits, and why. */
export interface Wait {
  /** When it may go again (epoch ms). */
  untilMs: number;
  /** Why it waits, for the deferral event. */
  reason: string;
  /** What the copy carries about its quota (the received copy's, without its held slots, when absent). */
  part?: QueuedPart | undefined;
}

/** What a retry needs: the message, when its body could be read. */
export type Retrying = Pick<Received, 'deps' | 'incoming'> & {
  startedAtMs: number;
  msg: QueuedMessage | undefined;
};

/**
 * Over quota: wait for the slots the guard reserved (exactly, once), or for the window to free up; or fail a message
 * no window could ever hold.
 */
export async function refused(c: Received, decision: WaitDecision | NeverDecision): Promise<Outcome> {
  if (decision.kind === 'wait') {
    const part = decision.held ? { ...c.msg.part, reservations: decision.held } : undefined;
    return defer(c, { untilMs: decision.retryAtMs, reason: `quota ${decision.scope}`, part });
  }
  await fail(c, {
    code: 'exceeds_quota',
    message: `the message needs more ${decision.scope} quota than its ${channelOf(c.msg).kind}'s configured limit allows in one window`,
  });
  return 'ack';
}

/**
 * Retry after a full-jitter backoff that keeps growing across copies, until the message's deadline
 * (deadline.ts). The first retries leave the message in SQS (a batch item failure whose visibility is set to
 * the delay); the one before SQS would move it to the DLQ (maxReceiveCount) travels as a fresh copy instead, so
 * only the time budget ends a message that keeps failing — a WeCom outage of hours does not send the backlog to
 * the DLQ, and the DLQ keeps its meaning: messages the sender itself could not handle.
 */
export async function scheduleRetry(c: Retrying, failure: AttemptFailure): Promise<Outcome> {
  const { deps, incoming: r, msg } = c;
  const err = failure.error;
  const now = nowOf(deps);
  const failures = (msg?.priorFailures ?? 0) + r.receiveCount;
  let delay = fullJitterSeconds(failures, deps.retry ?? DEFAULT_RETRY, deps.random);
  // A remembered gettoken failure says when WeCom may be asked again: no point coming back before.
  const notBefore =
    err instanceof TokenUnavailableError || err instanceof WecomApiError ? err.retryAtMs : undefined;
  if (notBefore !== undefined) delay = Math.max(delay, Math.ceil((notBefore - now) / 1000));
  if (msg) {
    const detail = detailOf(err);
    const attempt: FailedAttempt = {
      receive: r.receiveCount,
      number: failures,
      startedAt: new Date(c.startedAtMs).toISOString(),
      inDoubt: failure.inDoubt,
      earlierInDoubt: msg.inDoubt,
      detail,
    };
    const deadline = deadlineFor(deps, msg);
    if (now + delay * 1000 >= deadline.atMs) {
      await endAtDeadline({ deps, msg }, deadline, detail, attempt);
      return 'ack';
    }
    if (
      r.receiveCount >= deps.maxReceiveCount - 1 &&
      (await requeue({ deps, incoming: r, msg }, attempt, delay))
    )
      return 'ack';
    await deps.messages
      .transition(msg.id, changes.retry(new Date(now).toISOString(), attempt))
      .catch((e: unknown) => deps.logger.error('could not record the retry', { err: e, messageId: msg.id }));
    deps.metrics.count('Retried');
  }
  await deps.queue
    .retryAfter(r.lane, r.receiptHandle, delay)
    .catch((e: unknown) =>
      deps.logger.warn('could not set the retry delay; the queue default applies', { err: e }),
    );
  return 'retry';
}

/** A retry as a fresh copy (generation + 1): SQS's receive count starts again. False if it could not be queued. */
async function requeue(c: Received, attempt: FailedAttempt, delaySeconds: number): Promise<boolean> {
  const { deps, incoming: r, msg } = c;
  const inDoubt = inDoubtAfter(attempt);
  const copy: QueuedMessage = {
    ...msg,
    generation: msg.generation + 1,
    priorFailures: attempt.number,
    ...(inDoubt ? { inDoubt } : {}),
  };
  try {
    await deps.queue.enqueue(r.lane, copy, Math.min(MAX_DELAY_SECONDS, delaySeconds));
  } catch (err) {
    deps.logger.warn('could not queue the retry copy; retrying through SQS', { err, messageId: msg.id });
    return false;
  }
  await deps.messages
    .transition(msg.id, changes.retry(new Date(nowOf(deps)).toISOString(), attempt, copy.generation))
    .catch((e: unknown) => deps.logger.error('could not record the retry', { err: e, messageId: msg.id }));
  deps.metrics.count('Retried');
  return true;
}

const detailOf = (err: unknown): string =>
  err instanceof WecomApiError
    ? `errcode ${err.errcode}`
    : err instanceof Error
      ? `${(err as { code?: string }).code ?? err.name}`
      : 'error';

/**
 * Wait without touching the DLQ count: a fresh copy (generation + 1) is enqueued with a delay and the
 * received one acknowledged. The record's generation tells a stale copy (its delete failed) to stand down. A wait
 * that would end past the message's deadline ends the message now instead.
 *
 * With `part.reservations` the copy holds quota reservations and wakes for them exactly: a little early (the sender waits the rest
 * in-process), never in a crowd. Otherwise it wakes when the window frees up, spread by a random jitter.
 */
export async function defer(c: Received, wait: Wait): Promise<Outcome> {
  const { deps, msg } = c;
  const { reason, part } = wait;
  const now = nowOf(deps);
  const deadline = deadlineFor(deps, msg);
  if (wait.untilMs >= deadline.atMs) {
    await endAtDeadline(c, deadline, reason);
    return 'ack';
  }
  const copy: QueuedMessage = { ...msg, generation: msg.generation + 1 };
  const kept = part ?? (msg.part ? { ...msg.part, reservations: undefined } : undefined);
  if (kept && (kept.touser || kept.first || kept.reservations)) copy.part = withoutEmpty(kept);
  else delete copy.part;
  let delaySeconds: number;
  try {
    delaySeconds = await enqueueCopy(c, copy, {
      atMs: wait.untilMs,
      exact: copy.part?.reservations !== undefined,
    });
  } catch (err) {
    deps.logger.error('could not re-enqueue a deferred message; retrying it through SQS', {
      err,
      messageId: msg.id,
    });
    return scheduleRetry({ ...c, msg: undefined, startedAtMs: now }, { error: err, inDoubt: false });
  }
  const at = new Date(now).toISOString();
  const change = changes.defer(at, copy.generation, msg.inDoubt, `${reason}; retry in ${delaySeconds}s`);
  await deps.messages
    .transition(msg.id, change)
    .catch((err: unknown) => deps.logger.error('could not record the deferral', { err, messageId: msg.id }));
  deps.metrics.count('Deferred', 1, dimensionsOf(channelOf(msg)));
  return 'ack';
}

/** The message's time is up: `expired` (its own ttl_seconds) or `dead` (the app's delivery budget). */
export async function endAtDeadline(
  c: Pick<Received, 'deps' | 'msg'>,
  deadline: Deadline,
  last: string,
  attempt?: FailedAttempt,
): Promise<void> {
  const { deps, msg } = c;
  const at = new Date(nowOf(deps)).toISOString();
  const change =
    deadline.kind === 'ttl'
      ? changes.expire(at, {
          code: 'ttl_expired',
          message: `${segmentLabel(msg)}not delivered within ttl_seconds (${deadline.seconds} s); last: ${last}`,
        })
      : changes.die(at, attempt, {
          code: 'budget_exhausted',
          message: `${segmentLabel(msg)}not delivered within the ${channelOf(msg).kind}'s delivery budget (${deadline.seconds} s, delivery.budgetSeconds); last: ${last}`,
        });
  await deps.messages
    .transition(msg.id, change)
    .catch((err: unknown) =>
      deps.logger.error('could not record the end of the message', { err, messageId: msg.id }),
    );
  deps.metrics.count(deadline.kind === 'ttl' ? 'Expired' : 'Dead');
}

/** WeCom: "大部分企业应用在每小时的0分或30分触发推送消息,容易造成资源挤占" (path/90236): avoid those minutes. */
const CROWDED_MINUTES = [0, 30];
/** Long waits may move past a crowded minute: a minute more costs nothing after five. */
const CROWD_AVOIDING_WAIT_MS = 5 * 60_000;

/**
 * Enqueues a deferred copy to wake at `wake.atMs`, in the lane it came in. `exact`: the copy holds slots; it arrives
 * up to a second before them (SQS delays are whole seconds). Else the wake is spread over
 * `deferJitterSeconds` and, for a long wait, kept out of the minutes WeCom says everyone crowds into. A wake beyond
 * SQS's longest delay (15 min) is reached in hops: the copy carries it in `notBeforeMs`. Returns the delay used.
 */
export async function enqueueCopy(
  c: Pick<Received, 'deps' | 'incoming'>,
  copy: QueuedMessage,
  { atMs, exact }: { atMs: number; exact: boolean },
): Promise<number> {
  const { deps } = c;
  const now = nowOf(deps);
  let wake = atMs;
  if (!exact) {
    wake += (deps.random ?? Math.random)() * (deps.deferJitterSeconds ?? 10) * 1000;
    if (wake - now >= CROWD_AVOIDING_WAIT_MS) wake = awayFromCrowdedMinutes(wake, deps.random ?? Math.random);
  }
  // Holding slots: arrive before them, never after (lib/quota `heldDelaySeconds`); the guard waits the rest.
  const wanted = exact ? heldDelaySeconds(wake, now) : Math.ceil((wake - now) / 1000);
  const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(exact ? 0 : 1, wanted));
  if (wanted > MAX_DELAY_SECONDS) copy.notBeforeMs = wake;
  else delete copy.notBeforeMs;
  await deps.queue.enqueue(c.incoming.lane, copy, delaySeconds);
  return delaySeconds;
}

function awayFromCrowdedMinutes(t: number, random: () => number): number {
  const minute = Math.floor(t / 60_000) % 60;
  if (!CROWDED_MINUTES.includes(minute)) return t;
  return (Math.floor(t / 60_000) + 1) * 60_000 + random() * 30_000;
}

const withoutEmpty = (p: QueuedPart): QueuedPart =>
  Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as QueuedPart;

/** Fails the message for good (WeCom refused it, or no quota window could ever hold it). */
export async function fail(
  c: Pick<Received, 'deps' | 'msg'>,
  error: { code: string; message: string; wecom_errcode?: number },
): Promise<void> {
  const { deps, msg } = c;
  const named = { ...error, message: `${segmentLabel(msg)}${error.message}` };
  await deps.messages.transition(msg.id, changes.fail(new Date(nowOf(deps)).toISOString(), named));
  deps.metrics.count('Failed', 1, dimensionsOf(channelOf(msg)));
}
