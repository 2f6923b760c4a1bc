import type { Channel } from '#lib/messages/index.js';
import type { AppConfig, GatewayConfig, RobotConfig } from './schema.js';

/** What apps and robots configure alike: where their messages' webhooks go, and how long their messages wait. */
export type ChannelConfig =
  | Pick<AppConfig, 'webhook' | 'delivery'>
  | Pick<RobotConfig, 'webhook' | 'delivery'>;

/**
 * The configuration of a message's channel: `apps.<name>` or `robots.<name>`; undefined when it is not configured
 * (any more).
 *
 * @example channelConfig(config, { kind: 'robot', name: 'oncall' })?.webhook
 */
export function channelConfig(config: GatewayConfig, channel: Channel): AppConfig | RobotConfig | undefined {
  if (channel.kind === 'robot') {
    const robots = config.robots ?? {};
    return Object.hasOwn(robots, channel.name) ? robots[channel.name] : undefined;
  }
  return Object.hasOwn(config.apps, channel.name) ? config.apps[channel.name] : undefined;
}
