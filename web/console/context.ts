import { ApiError, api } from './api.js';
import type { MessageFilters, Route } from './routes.js';

/** What every page gets: navigation, the key (its scopes) and the apps it may read (fetched once per sign-in). */
export interface PageContext {
  navigate(route: Route, options?: { replace?: boolean }): void;
  apps(): Promise<AppSummary[]>;
  /** The group robots the key may use (none from a gateway that predates robots). */
  robots(): Promise<RobotSummary[]>;
  key(): Promise<KeyInfo>;
  /** The filters of the Messages page last shown, so that a message's page links back to the same list. */
  lastMessages(): MessageFilters;
  rememberMessages(filters: MessageFilters): void;
}

export interface AppSummary {
  app: string;
  state: string;
}

export interface RobotSummary {
  robot: string;
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

let robotList: Promise<RobotSummary[]> | undefined;

/** GET /v1/robots, once per sign-in; a gateway without robots answers 404: no robots. */
export const keyRobots = (): Promise<RobotSummary[]> => {
  robotList ??= api<{ robots: RobotSummary[] }>('/v1/robots').then(
    (r) => r.robots,
    (err: unknown) => {
      robotList = undefined;
      if (err instanceof ApiError && err.status === 404) return [];
      throw err;
    },
  );
  return robotList;
};

export const forgetApps = (): void => {
  appList = undefined;
  robotList = undefined;
};
