import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeReleaseNotice } from '#lib/model/index.js';
import type { ReleaseTimer, ReleaseTimers } from '#lib/queue/index.js';
import type { LaneName, ReleaseTimerTarget } from '#lib/resources/index.js';
import type { LocalClock } from './clock.js';

/** EventBridge Scheduler's backoff between delivery retries is not documented; a few seconds, doubling, capped. */
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 60_000;

interface Pending extends ReleaseTimer {
  /** Delivery attempts so far. */
  attempts: number;
  /** When it was first due: its events' age counts from here (RetryPolicy MaximumEventAgeInSeconds). */
  firstDueMs: number;
}

/**
 * EventBridge Scheduler's one-time schedules, emulated for the local stack with the stack's own definition
 * (lib/resources `ReleaseTimerTarget`): no emulator of Scheduler runs its schedules (LocalStack's only mocks the
 * API). A timer fires at its `at()` time on the local clock, puts the release notice in its lane through the real
 * SQS client, retries a failed delivery per the retry policy, sends the notice to the dead-letter queue when that
 * runs out, and is deleted once it fired (ActionAfterCompletion DELETE). One real timer waits for the earliest, so an
 * idle stack does no work; moving the clock re-arms it.
 */
export class LocalReleaseTimers implements ReleaseTimers {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly unsubscribe: () => void;
  /** Names of the timers that fired, in order (tests read it). */
  readonly fired: string[] = [];

  constructor(
    private readonly opts: {
      sqs: Pick<SQSClient, 'send'>;
      clock: LocalClock;
      target: ReleaseTimerTarget;
      /** The queue URL of an ARN the target names (the lanes and the dead-letter queue). */
      urlOf: (arn: string) => string;
      onError?: (err: unknown) => void;
    },
  ) {
    this.unsubscribe = opts.clock.onAdvance(() => this.arm());
  }

  async set(timer: ReleaseTimer): Promise<void> {
    if (this.pending.has(timer.id)) return;
    this.pending.set(timer.id, { ...timer, attempts: 0, firstDueMs: timer.atMs });
    this.arm();
  }

  async clear(id: string): Promise<boolean> {
    const had = this.pending.delete(id);
    this.arm();
    return had;
  }

  /** Timers not yet fired (tests read it). */
  size(): number {
    return this.pending.size;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || this.pending.size === 0) return;
    const next = Math.min(...[...this.pending.values()].map((p) => p.atMs));
    const wait = Math.max(0, next - this.opts.clock.now());
    // setTimeout's longest wait is about 24.8 days; a later timer is armed again on the way.
    this.timer = setTimeout(() => void this.fireDue(), Math.min(wait, 2 ** 31 - 1));
    this.timer.unref?.();
  }

  private async fireDue(): Promise<void> {
    const now = this.opts.clock.now();
    const due = [...this.pending.values()].filter((p) => p.atMs <= now);
    await Promise.all(due.map((p) => this.fire(p, now)));
    this.arm();
  }

  private async fire(p: Pending, now: number): Promise<void> {
    const { target } = this.opts;
    try {
      await this.send(target.laneArns[p.lane as LaneName], encodeReleaseNotice(p.id));
      this.done(p);
    } catch (err) {
      this.opts.onError?.(err);
      p.attempts++;
      const tooOld = now - p.firstDueMs >= target.retry.maximumEventAgeSeconds * 1000;
      if (p.attempts > target.retry.maximumRetryAttempts || tooOld) {
        await this.send(target.deadLetterArn, encodeReleaseNotice(p.id)).catch(this.opts.onError);
        this.done(p);
        return;
      }
      p.atMs = now + Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (p.attempts - 1));
    }
  }

  /** ActionAfterCompletion: DELETE removes it; NONE keeps it (inert, an `at()` schedule never fires twice). */
  private done(p: Pending): void {
    this.pending.delete(p.id);
    this.fired.push(p.id);
  }

  private async send(arn: string, body: string): Promise<void> {
    await this.opts.sqs.send(new SendMessageCommand({ QueueUrl: this.opts.urlOf(arn), MessageBody: body }));
  }
}
