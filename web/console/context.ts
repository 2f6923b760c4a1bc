import { api } from './api.js';
import type { Route } from './routes.js';

/** What every page gets: navigation, and the apps the key may read (fetched once per sign-in). */
export interface PageContext {
  navigate(route: Route, options?: { replace?: boolean }): void;
  apps(): Promise<AppSummary[]>;
}

export interface AppSummary {
  app: string;
  state: string;
}

let appsOfKey: Promise<AppSummary[]> | undefined;

export const keyApps = (): Promise<AppSummary[]> => {
  appsOfKey ??= api<{ apps: AppSummary[] }>('/v1/apps').then(
    (r) => r.apps,
    (err: unknown) => {
      appsOfKey = undefined;
      throw err;
    },
  );
  return appsOfKey;
};

export const forgetApps = (): void => {
  appsOfKey = undefined;
};
