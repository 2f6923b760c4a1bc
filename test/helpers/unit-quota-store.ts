import type { MemberVerdict, QuotaStore } from '#lib/store/index.js';

const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * In-memory QuotaStore with the conditional semantics of DynamoQuotaStore (check and add in one step after a
 * simulated round trip). Counts every call, so tests can measure store requests per message.
 */
export class InMemoryQuotaStore implements QuotaStore {
  readonly counters = new Map<string, number>();
  readonly members = new Map<string, { hour: number; minutes: Map<number, number> }>();
  readonly calls = { reserve: 0, release: 0, reserveMember: 0, releaseMember: 0 };

  total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  used(app: string, scope: string, window: number): number {
    return this.counters.get(`${app}#${scope}#${window}`) ?? 0;
  }

  async counter(app: string, scope: string, window: number): Promise<number> {
    return this.used(app, scope, window);
  }

  memberUsage(app: string, userId: string, hour: number): { hour: number; minutes: Map<number, number> } {
    return this.members.get(`${app}#${userId}#${hour}`) ?? { hour: 0, minutes: new Map() };
  }

  async reserve(app: string, scope: string, window: number, amount: number, limit: number): Promise<boolean> {
    this.calls.reserve++;
    await roundTrip();
    const key = `${app}#${scope}#${window}`;
    const used = this.counters.get(key) ?? 0;
    if (used + amount > limit) return false;
    this.counters.set(key, used + amount);
    return true;
  }

  async release(app: string, scope: string, window: number, amount: number): Promise<void> {
    this.calls.release++;
    await roundTrip();
    const key = `${app}#${scope}#${window}`;
    const used = this.counters.get(key);
    if (used !== undefined && amount > 0) this.counters.set(key, used - amount);
  }

  async reserveMember(
    app: string,
    userId: string,
    hour: number,
    minuteOfHour: number,
    limits: { perMinute: number; perHour: number },
  ): Promise<MemberVerdict> {
    this.calls.reserveMember++;
    await roundTrip();
    const key = `${app}#${userId}#${hour}`;
    const item = this.members.get(key) ?? { hour: 0, minutes: new Map<number, number>() };
    const minute = item.minutes.get(minuteOfHour) ?? 0;
    if (item.hour >= limits.perHour) return 'hour';
    if (minute >= limits.perMinute) return 'minute';
    item.hour++;
    item.minutes.set(minuteOfHour, minute + 1);
    this.members.set(key, item);
    return 'ok';
  }

  async releaseMember(app: string, userId: string, hour: number, minuteOfHour: number): Promise<void> {
    this.calls.releaseMember++;
    await roundTrip();
    const item = this.members.get(`${app}#${userId}#${hour}`);
    if (!item) return;
    item.hour--;
    item.minutes.set(minuteOfHour, (item.minutes.get(minuteOfHour) ?? 1) - 1);
  }
}
