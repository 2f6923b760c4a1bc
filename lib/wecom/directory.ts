import { randomUUID } from 'node:crypto';
import { SingleFlight } from '#lib/util/index.js';
import type { WecomApi } from './client.js';
import { type BroadcastTarget, type Reach, resolveTarget, targetName } from './contacts.js';
import { WecomError } from './errors.js';
import type { TokenApp } from './token-cache.js';

/** A resolved broadcast target as it is shared between containers. */
export interface StoredReach {
  reach: Reach;
  fetchedAtMs: number;
}

/** Port (DynamoDB adapter: lib/store/directory-store.ts): the shared cache of broadcast targets, with a refresh lock. */
export interface DirectoryStore {
  get(corpId: string, agentId: number, target: string): Promise<StoredReach | undefined>;
  put(
    corpId: string,
    agentId: number,
    target: string,
    entry: StoredReach,
    expiresAtMs: number,
  ): Promise<void>;
  acquireLock(
    corpId: string,
    agentId: number,
    target: string,
    owner: string,
    leaseMs: number,
  ): Promise<boolean>;
  releaseLock(corpId: string, agentId: number, target: string, owner: string): Promise<void>;
}

export interface BroadcastDirectoryOptions {
  /** How long a resolved membership is used before it is read again (default 24 h: contacts change rarely). */
  refreshMs?: number;
  /** How long "the app may not read this" is believed (default 1 h: an operator may grant the permission). */
  forbiddenRefreshMs?: number;
  /** How long a container trusts its own copy before looking at the shared one (default 5 min). */
  memoryMs?: number;
  /** Lock lease: a resolution of a large `@all` takes many calls (default 60 s). */
  leaseMs?: number;
  /** How long a caller waits for another container's first resolution (default 10 s). */
  maxWaitMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Called after each resolution through WeCom (metrics, tests). */
  onResolve?: (target: string) => void;
}

/** No membership could be had in time (another container is still resolving it): retry the message later. */
export class DirectoryUnavailableError extends WecomError {
  override readonly name = 'DirectoryUnavailableError';
  override readonly code = 'directory_unavailable';
  constructor(readonly target: string) {
    super(`whom ${target} reaches is still being read from WeCom's contacts; retry later`);
  }
}

interface Remembered extends StoredReach {
  checkedAtMs: number;
}

/**
 * Whom a party, a tag or `@all` reaches, per app: memory → DynamoDB item → lock item → the contacts API, like the
 * access token (./token-cache.ts). One container resolves a target and all share the answer; it is read again
 * only after `refreshMs`, never per message. While one container refreshes, the others use the previous answer.
 *
 * @example const reach = await directory.reach(app, { kind: 'party', id: '2' }, token);
 */
export class BroadcastDirectory {
  private readonly memory = new Map<string, Remembered>();
  private readonly flights = new SingleFlight<string, Reach>();
  private readonly owner = randomUUID();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly o: Required<Omit<BroadcastDirectoryOptions, 'now' | 'sleep' | 'onResolve'>>;

  constructor(
    private readonly store: DirectoryStore,
    private readonly wecom: Pick<WecomApi, 'contacts'>,
    private readonly opts: BroadcastDirectoryOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.o = {
      refreshMs: opts.refreshMs ?? 86_400_000,
      forbiddenRefreshMs: opts.forbiddenRefreshMs ?? 3_600_000,
      memoryMs: opts.memoryMs ?? 300_000,
      leaseMs: opts.leaseMs ?? 60_000,
      maxWaitMs: opts.maxWaitMs ?? 10_000,
    };
  }

  async reach(app: TokenApp, target: BroadcastTarget, token: string): Promise<Reach> {
    const name = targetName(target);
    const key = `${app.corpId}#${app.agentId}#${name}`;
    const mine = this.memory.get(key);
    if (mine && this.now() - mine.checkedAtMs < this.o.memoryMs && this.isFresh(mine)) return mine.reach;
    return this.flights.run(key, () => this.load(app, target, name, key, token));
  }

  private async load(app: TokenApp, target: BroadcastTarget, name: string, key: string, token: string) {
    const started = this.now();
    let delay = 50;
    for (;;) {
      const stored = await this.store.get(app.corpId, app.agentId, name);
      if (stored && this.isFresh(stored)) return this.remember(key, stored);
      if (await this.store.acquireLock(app.corpId, app.agentId, name, this.owner, this.o.leaseMs)) {
        try {
          const again = await this.store.get(app.corpId, app.agentId, name);
          if (again && this.isFresh(again)) return this.remember(key, again);
          const reach = await resolveTarget(
            (api, query) => this.wecom.contacts(token, api, query),
            app.agentId,
            target,
          );
          this.opts.onResolve?.(name);
          const entry = { reach, fetchedAtMs: this.now() };
          await this.store.put(app.corpId, app.agentId, name, entry, this.now() + 2 * this.o.refreshMs);
          return this.remember(key, entry);
        } finally {
          await this.store.releaseLock(app.corpId, app.agentId, name, this.owner);
        }
      }
      // Someone else is resolving it: an older answer is good enough meanwhile.
      if (stored) return this.remember(key, stored);
      if (this.now() - started >= this.o.maxWaitMs) throw new DirectoryUnavailableError(name);
      await this.sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 1_000);
    }
  }

  private isFresh(e: StoredReach): boolean {
    const life = e.reach.status === 'members' ? this.o.refreshMs : this.o.forbiddenRefreshMs;
    return this.now() < e.fetchedAtMs + life;
  }

  private remember(key: string, e: StoredReach): Reach {
    this.memory.set(key, { ...e, checkedAtMs: this.now() });
    return e.reach;
  }
}
