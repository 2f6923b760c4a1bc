/** The channel a list of messages belongs to: an app (`app=`) or a group robot (`robot=`). */
export type Channel = { kind: 'app'; name: string } | { kind: 'robot'; name: string };

/** How the console names a channel: an app by its name, a robot as `robot <name>`. */
export const channelLabel = (c: Channel): string => (c.kind === 'robot' ? `robot ${c.name}` : c.name);

/** The channel of an API entry that names its `app`, or for a group robot's message its `robot`. */
export const channelOfEntry = (e: { app?: string; robot?: string }): Channel =>
  e.robot !== undefined ? { kind: 'robot', name: e.robot } : { kind: 'app', name: e.app ?? '' };
