import { afterEach, describe, expect, it } from 'vitest';
import { maxInRollingWindow } from '#local/harness/windows.js';
import { scaledMinutes, startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';
import { robotMarkdown, withRobot } from '#test/helpers/robots.js';

/**
 * A group robot through the whole local stack, against the simulator's strict readings (every rolling minute
 * counted, the 21st message refused with 45009). WeCom's minute runs as 4 seconds in the gateway and the simulator
 * alike (scaledMinutes), so the robot's 16 a minute (`high`; 20 less the margin) are 250 ms apart.
 */
const MINUTE_MS = 4_000;
const contentOf = (payload: unknown) => (payload as { content: string }).content;

describe('a group robot’s minute, end to end', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stack.stop();
    gw = undefined;
  });

  it('delivers a burst of 60 in the order accepted, never more than 20 in a rolling minute, none refused', {
    timeout: 60_000,
  }, async () => {
    const scaled = scaledMinutes(MINUTE_MS);
    const g = await startTestGateway({
      ...scaled,
      simulator: { ...scaled.simulator, readings: 'strict' },
      configure: withRobot,
    });
    gw = g;
    const sim = g.stack.simulator;
    if (!sim) throw new Error('no simulator');

    // One after another, each once the sender has given the one before it its slot: SQS keeps no order between
    // sender containers, and the promise is the order in which the gateway accepted them.
    for (let i = 0; i < 60; i++) {
      const res = await g.post('/v1/messages', robotMarkdown(`alert ${i}`, { priority: 'high' }));
      expect(res.status).toBe(202);
      await g.waitForStatus(res.body.id, ['deferred', 'sent'], 30_000);
    }
    await waitFor(
      () => sim.groupInbox('oncall').length >= 60,
      40_000,
      () => `${sim.groupInbox('oncall').length} of 60`,
    );

    const inbox = sim.groupInbox('oncall');
    expect(inbox.map((m) => contentOf(m.payload))).toEqual(
      Array.from({ length: 60 }, (_, i) => `alert ${i}`),
    );
    expect(
      maxInRollingWindow(
        inbox.map((m) => m.receivedAt),
        MINUTE_MS,
      ),
    ).toBeLessThanOrEqual(20);
    expect(sim.stats().byErrcode['45009'] ?? 0).toBe(0);
    expect(sim.groups()[0]?.refused).toBe(0);
  });
});
