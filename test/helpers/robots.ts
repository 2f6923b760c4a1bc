import type { GatewayConfig } from '#lib/config/index.js';

/** The key of the test robot `oncall` (a UUID, as WeCom issues them). */
export const ROBOT_KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';

/** Adds robot `oncall` to a test config (WeCom's 20 a minute, the default margin) and lets every key use it. */
export function withRobot(config: GatewayConfig): void {
  config.robots = {
    oncall: { key: ROBOT_KEY, quota: { perMinute: 20, safetyMargin: 0.2, normalShare: 0.8 } },
  };
  for (const k of config.apiKeys) k.robots = ['oncall'];
}

/** A markdown message to robot `oncall`. */
export const robotMarkdown = (content: string, extra: Record<string, unknown> = {}) => ({
  robot: 'oncall',
  msgtype: 'markdown',
  markdown: { content },
  ...extra,
});
