/**
 * A value built on its first use and kept: what a function needs only for its rarer routes is built (and its module
 * loaded) then, not at every cold start. A build that fails is tried again on the next use, so a transient error
 * during the first one does not stick for the container's life.
 *
 * @example const timers = new OnFirstUse(async () => new Timers(await schedulerClient()));
 *          await (await timers.get()).set(timer);
 */
export class OnFirstUse<T> {
  private pending: Promise<T> | undefined;

  constructor(private readonly build: () => Promise<T>) {}

  get(): Promise<T> {
    this.pending ??= this.build().catch((err: unknown) => {
      this.pending = undefined;
      throw err;
    });
    return this.pending;
  }

  /**
   * The value once a build under way or done has settled, without starting one: undefined if none was asked for or
   * it failed (e.g. to close what was opened, even while the first use is still building it).
   */
  async settled(): Promise<T | undefined> {
    return this.pending?.catch(() => undefined);
  }
}
