import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRICT_READINGS, type WecomSimulator } from '#local/wecom-sim/index.js';
import { startTestGateway, type TestGateway, text } from '#test/helpers/gateway.js';
import { getApi, getToken } from '#test/helpers/sim-fixtures.js';

describe('WeCom simulator readings and directory on the local stack', () => {
  let gw: TestGateway;
  let sim: WecomSimulator;
  beforeAll(async () => {
    gw = await startTestGateway({
      simulator: {
        readings: 'strict',
        directory: { partyMembers: { '2': ['zhangsan', 'lisi'] } },
      },
    });
    if (!gw.stack.simulator) throw new Error('no simulator');
    sim = gw.stack.simulator;
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('plays the readings and directory given in the stack options', async () => {
    expect(sim.readings()).toEqual(STRICT_READINGS);
    const agentid = String(gw.stack.config.apps.ops?.agentId);

    const range = await getApi(sim, 'agent/get', await getToken(sim, simApp(gw)), { agentid });
    const members = await getApi(sim, 'user/simplelist', await getToken(sim, simApp(gw)), {
      department_id: '2',
    });

    expect(range).toMatchObject({ errcode: 0, allow_partys: { partyid: [1] } });
    expect((members.userlist as { userid: string }[]).map((u) => u.userid)).toEqual(['zhangsan', 'lisi']);
  });

  it('delivers a gateway message to a party under the strict readings, one person-time per member', async () => {
    const { body } = await gw.post(
      '/v1/messages',
      text('to the party', [], { touser: undefined, toparty: '2' }),
    );

    await gw.waitForStatus(body.id, ['sent']);

    expect(sim.inbox('ZhangSan')).toHaveLength(1);
    expect(sim.inbox('lisi')).toHaveLength(1);
    expect(sim.stats()).toMatchObject({ delivered: 2, dropped: 0 });
  });
});

function simApp(gw: TestGateway) {
  const app = gw.stack.config.apps.ops;
  if (app === undefined) throw new Error('no ops app');
  return { corpId: app.corpId, secret: app.secret, agentId: app.agentId };
}
