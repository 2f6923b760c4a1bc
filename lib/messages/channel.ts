/**
 * A message goes out through one of two channels: an app (`message/send`, to members by userid, party or tag) or a
 * group robot (`webhook/send`, to the one group chat the robot was added to). A request, a record and a queue body
 * name exactly one of them, in the field of that name (`app` or `robot`).
 */
export type ChannelKind = 'app' | 'robot';

/** The channel a message goes through, as a typed value. */
export type Channel = { kind: 'app'; name: string } | { kind: 'robot'; name: string };

/** What a request, a record or a queue body carries of its channel: exactly one of `app` and `robot`. */
export type Addressed = { app: string; robot?: undefined } | { robot: string; app?: undefined };

/**
 * The channel of an addressed value.
 *
 * @example channelOf({ robot: 'oncall' }) // { kind: 'robot', name: 'oncall' }
 */
export function channelOf(m: Addressed): Channel {
  return m.robot !== undefined ? { kind: 'robot', name: m.robot } : { kind: 'app', name: m.app };
}

/** The addressing fields of a channel (what a request or record carries). */
export const addressOf = (c: Channel): Addressed =>
  c.kind === 'robot' ? { robot: c.name } : { app: c.name };

/**
 * The name a channel's shared state is kept under (its pause, its quota counters, its message list): an app's own
 * name, as before robots existed, and `robot:<name>` for a robot. App names are [A-Za-z0-9_-], so the two never
 * meet. Only the stores' keys use it; the code passes {@link Channel} values.
 */
export const channelKey = (c: Channel): string =>
  c.kind === 'robot' ? `${ROBOT_KEY_PREFIX}${c.name}` : c.name;

const ROBOT_KEY_PREFIX = 'robot:';

/** The channel a {@link channelKey} names. */
export const channelOfKey = (key: string): Channel =>
  key.startsWith(ROBOT_KEY_PREFIX)
    ? { kind: 'robot', name: key.slice(ROBOT_KEY_PREFIX.length) }
    : { kind: 'app', name: key };

/** How a channel is named to people: `app ops`, `robot oncall`. */
export const channelLabel = (c: Channel): string => `${c.kind} ${c.name}`;
