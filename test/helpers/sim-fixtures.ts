import {
  type SimApp,
  type SimulatorOptions,
  startWecomSimulator,
  type WecomSimulator,
} from '#local/wecom-sim/index.js';

export const APP: SimApp = { corpId: 'ww-test-corp', secret: 'secret-a', agentId: 1000002 };
export const OTHER_APP: SimApp = { corpId: 'ww-test-corp', secret: 'secret-b', agentId: 1000003 };

export interface SimAnswer {
  errcode: number;
  errmsg: string;
  [field: string]: unknown;
}

/** A simulator with no latency and both test apps; override anything per test. */
export function startTestSimulator(overrides: Partial<SimulatorOptions> = {}): Promise<WecomSimulator> {
  return startWecomSimulator({ apps: [APP, OTHER_APP], latencyMs: 0, ...overrides });
}

/** A manually advanced clock for window and expiry tests. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

export async function getToken(sim: WecomSimulator, app: SimApp = APP): Promise<string> {
  const answer = await gettoken(sim, app.corpId, app.secret);
  if (answer.errcode !== 0 || typeof answer.access_token !== 'string') {
    throw new Error(`gettoken failed with errcode ${answer.errcode}`);
  }
  return answer.access_token;
}

export async function gettoken(sim: WecomSimulator, corpid: string, corpsecret: string): Promise<SimAnswer> {
  const query = new URLSearchParams({ corpid, corpsecret });
  const res = await fetch(`${sim.url}/cgi-bin/gettoken?${query.toString()}`);
  return (await res.json()) as SimAnswer;
}

export async function postApi(
  sim: WecomSimulator,
  api: 'send' | 'recall',
  token: string | undefined,
  body: unknown,
): Promise<SimAnswer> {
  const query = token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`;
  const res = await fetch(`${sim.url}/cgi-bin/message/${api}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return (await res.json()) as SimAnswer;
}

export const send = (sim: WecomSimulator, token: string | undefined, body: unknown): Promise<SimAnswer> =>
  postApi(sim, 'send', token, body);

export function textMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    touser: 'alice',
    msgtype: 'text',
    agentid: APP.agentId,
    text: { content: 'disk almost full' },
    ...overrides,
  };
}
