import type { MessageRecord } from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import type { Outcome, Received, RobotQueuedMessage, Sent } from './types.js';

/** Until the robot sender exists, a robot's message waits in its lane (the batch retries it). */
export async function sendByRobot(
  _c: Received & { msg: RobotQueuedMessage },
  _ctx: { log: Logger; startedAtMs: number; stored: MessageRecord | undefined; firstDeliveries: Sent[] },
): Promise<Outcome> {
  throw new Error('the robot sender is not built yet');
}
