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
  private value: T | undefined;

  constructor(private readonly build: () => Promise<T>) {}

  get(): Promise<T> {
    this.pending ??= this.build().then(
      (value) => {
        this.value = value;
        return value;
      },
      (err: unknown) => {
        this.pending = undefined;
        throw err;
      },
    );
    return this.pending;
  }

  /** The value if it was built, without building it (e.g. to close what was opened). */
  get built(): T | undefined {
    return this.value;
  }
}
