/** No app of that name takes WeCom callbacks: not configured, or configured without `callback` settings. */
export class CallbackAppNotFoundError extends Error {
  override readonly name = 'CallbackAppNotFoundError';
  readonly code = 'not_found';
  readonly details: readonly unknown[] = [];
  constructor(app: string) {
    super(`no app ${app.slice(0, 64)} takes WeCom callbacks (it needs apps.<name>.callback in the config)`);
  }
}
