import type { ApiKeyConfig, RobotConfig } from '#lib/config/index.js';
import { channelKey } from '#lib/messages/index.js';
import { mayUse } from './access.js';
import { type AppState, type PauseView, pauseView, quotaView, stateOf } from './apps.js';
import { RobotNotFoundError } from './errors.js';
import type { IngestDeps } from './types.js';

/**
 * GET /v1/robots/{robot}: what the sender knows about a group robot right now — as `GET /v1/apps/{app}` for an app:
 * `paused` after WeCom's 45009, `circuit_open` after 93000 (a wrong key, or the robot removed from its group), 93004
 * (disabled) or 93008 (not in the group), with WeCom's reason and what to do; its rolling minute. Never its key.
 */
export interface RobotStateView {
  robot: string;
  state: AppState;
  pause: PauseView | null;
  /** The robot's rolling minute: WeCom's limit (20), what the gateway allows itself, what is used. */
  quota: ReturnType<typeof quotaView>[];
}

/** The robot, if the key may read it: 404 otherwise (the same answer for robots that do not exist). */
function robotFor(deps: IngestDeps, apiKey: ApiKeyConfig, robot: string): RobotConfig {
  const robots = deps.config.robots ?? {};
  const config = Object.hasOwn(robots, robot) ? robots[robot] : undefined;
  if (!config || !mayUse(apiKey, { kind: 'robot', name: robot })) {
    throw new RobotNotFoundError(`no robot ${robot.slice(0, 64)}`);
  }
  return config;
}

/**
 * @example const view = await getRobotState(deps, apiKey, 'oncall'); // { robot: 'oncall', state: 'active', … }
 */
export async function getRobotState(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  robot: string,
): Promise<RobotStateView> {
  const config = robotFor(deps, apiKey, robot);
  const now = (deps.now ?? Date.now)();
  const [pause, minute] = await Promise.all([
    deps.pauses.get(channelKey({ kind: 'robot', name: robot })),
    deps.quotaUsage.robotUsage?.(robot, now),
  ]);
  return {
    robot,
    state: stateOf(pause, now),
    pause: pause ? pauseView(pause, config) : null,
    quota: minute ? [quotaView(minute)] : [],
  };
}

/** GET /v1/robots: the robots the key may use, each with its state (one read per robot). */
export async function listRobots(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
): Promise<{ robots: { robot: string; state: AppState }[] }> {
  const now = (deps.now ?? Date.now)();
  const robots = deps.config.robots ?? {};
  const names = (apiKey.robots ?? []).filter((r) => Object.hasOwn(robots, r));
  const pauses = await Promise.all(names.map((r) => deps.pauses.get(channelKey({ kind: 'robot', name: r }))));
  return { robots: names.map((robot, i) => ({ robot, state: stateOf(pauses[i], now) })) };
}
