import { api } from './api.js';
import type { MessageFilters, Route } from './routes.js';

/** What every page gets: navigation, the key (its scopes) and the apps it may read (fetched once per sign-in). */
export interface PageContext {
  navigate(route: Route, options?: { replace?: boolean }): void;
  apps(): Promise<AppSummary[]>;
  key(): Promise<KeyInfo>;
  /** The filters of the Messages page last shown, so that a message's page links back to the same list. */
  lastMessages(): MessageFilters;
  rememberMessages(filters: MessageFilters): void;
}

export interface AppSummary {
  app: string;
  state: string;
}

/** The signed-in key as GET /v1/apps describes it: the console offers only the actions its scopes allow. */
export interface KeyInfo {
  name: string;
  scopes: string[];
}

interface AppList {
  key: KeyInfo;
  apps: AppSummary[];
}

let appList: Promise<AppList> | undefined;

const fetchAppList = (): Promise<AppList> => {
  appList ??= api<AppList>('/v1/apps').catch((err: unknown) => {
    appList = undefined;
    throw err;
  });
  return appList;
};

export const keyApps = (): Promise<AppSummary[]> => fetchAppList().then((r) => r.apps);

export const keyInfo = (): Promise<KeyInfo> => fetchAppList().then((r) => r.key);

export const forgetApps = (): void => {
  appList = undefined;
};
