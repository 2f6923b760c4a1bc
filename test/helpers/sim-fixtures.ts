import { request } from 'node:http';
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
  api: 'send' | 'recall' | 'update_template_card',
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

/** Sends `body` `n` times, one after the other; answers the errcodes in order. */
export async function sendRepeatedly(
  sim: WecomSimulator,
  token: string,
  n: number,
  body: unknown = textMessage(),
): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) codes.push((await send(sim, token, body)).errcode);
  return codes;
}

export function textMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    touser: 'alice',
    msgtype: 'text',
    agentid: APP.agentId,
    text: { content: 'disk almost full' },
    ...overrides,
  };
}

/** GET one of the simulator's query-string APIs (gettoken aside), e.g. `getApi(sim, 'tag/get', token, { tagid: '7' })`. */
export async function getApi(
  sim: WecomSimulator,
  api: string,
  token: string | undefined,
  params: Record<string, string> = {},
): Promise<SimAnswer> {
  const query = new URLSearchParams(token === undefined ? params : { access_token: token, ...params });
  const res = await fetch(`${sim.url}/cgi-bin/${api}?${query.toString()}`);
  return (await res.json()) as SimAnswer;
}

/**
 * A call made from another loopback address (127.0.0.0/8 all reaches the simulator on 127.0.0.1), so that tests
 * can tell callers apart by IP as WeCom does.
 */
export function callFrom(
  sim: WecomSimulator,
  localAddress: string,
  pathAndQuery: string,
  body?: unknown,
): Promise<SimAnswer> {
  const url = new URL(pathAndQuery, sim.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        localAddress,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as SimAnswer));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** POST to the simulator's inspection API; answers status and parsed JSON body. */
export async function inspect(
  sim: WecomSimulator,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}/__sim/${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
