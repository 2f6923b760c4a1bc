import type { WebApp } from '#lib/web/assets.js';
import { buildWebApp } from '#lib/web/build.js';
import { serveWebApp, type WebResponse } from '#lib/web/serve.js';

export const INBOX_UI_PATH = '/__sim/ui';

/**
 * The inbox page (web/inbox), built by esbuild on its first request and kept: most simulators (integration
 * tests, the benchmark) never serve it and should not pay for the build. `warm()` builds it ahead, for
 * `npm start`.
 */
export class InboxUi {
  #app: Promise<WebApp> | undefined;

  warm(): Promise<WebApp> {
    if (this.#app === undefined) {
      const app = buildWebApp({
        entry: 'web/inbox/main.ts',
        basePath: INBOX_UI_PATH,
        title: 'WeCom sim inbox',
      });
      // A failed build is retried on the next request instead of being answered forever.
      app.catch(() => {
        if (this.#app === app) this.#app = undefined;
      });
      this.#app = app;
    }
    return this.#app;
  }

  async serve(path: string): Promise<WebResponse | undefined> {
    return serveWebApp(await this.warm(), path);
  }
}
