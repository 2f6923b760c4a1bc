import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { SECURITY_HEADERS } from '#lib/web/serve.js';
import { sendCallback } from './callback.js';
import { CONTACTS_ROUTES, type ContactsApi } from './contacts.js';
import { type ApiAnswer, Corp, parseJsonObject } from './corp.js';
import { parseDirectory } from './directory.js';
import { ERRCODE, errmsgFor } from './errcodes.js';
import { InspectionRequestError, SimulatorError } from './errors.js';
import { Faults, parseFaultKind, parseFaultPath } from './faults.js';
import { INBOX_UI_PATH, InboxUi } from './inbox-ui.js';
import { RequestLog } from './request-log.js';
import { parseMultipart } from './robot-validation.js';
import { memberTimeline } from './timeline.js';
import type {
  ClickRequest,
  FaultKind,
  FaultPath,
  SimRobot,
  SimRobotState,
  SimulatorOptions,
  WecomSimulator,
} from './types.js';
import { CallbackTargets, clickXml, postEvent, replyXml } from './user.js';

const DEFAULT_LATENCY_MS = 20;
const REQUEST_LOG_CAPACITY = 10_000;
/** A 'timeout' fault holds the request at most this long, then drops the connection. */
const HOLD_CAP_MS = 60_000;
/** mpnews content may be 666 KB; anything far above that is not a WeCom request. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface ApiRoute {
  path: FaultPath;
  contacts?: ContactsApi;
}

const API_ROUTES: Record<string, ApiRoute> = {
  '/cgi-bin/gettoken': { path: 'gettoken' },
  '/cgi-bin/webhook/send': { path: 'robotSend' },
  '/cgi-bin/webhook/upload_media': { path: 'robotUpload' },
  '/cgi-bin/message/send': { path: 'send' },
  '/cgi-bin/message/recall': { path: 'recall' },
  '/cgi-bin/message/update_template_card': { path: 'updateCard' },
  ...Object.fromEntries(
    Object.entries(CONTACTS_ROUTES).map(([url, api]) => [
      url,
      { path: 'contacts', contacts: api } as ApiRoute,
    ]),
  ),
};

/** The caller's IP as WeCom sees it ("from ip: ..."); IPv4-mapped IPv6 is shown as IPv4. */
function clientIp(req: IncomingMessage): string {
  const ip = req.socket.remoteAddress ?? 'unknown';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

interface RequestContext {
  /** The errcode answered, for the request log; null while there is none. */
  errcode: number | null;
}

/** An API call as it arrived: its query, its body (as text, and as bytes for an upload), where it came from. */
interface ApiCall {
  query: URLSearchParams;
  body: string;
  raw: Buffer;
  contentType: string | undefined;
  ip: string;
}

async function readBody(req: IncomingMessage): Promise<string> {
  return (await readRawBody(req)).toString('utf8');
}

function readRawBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        reject(new InspectionRequestError('request body too large', { size }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

/**
 * Starts a WeCom server-API simulator on loopback.
 *
 * @example
 * const sim = await startWecomSimulator({ apps: [{ corpId: 'ww1', secret: 's', agentId: 1000002 }] });
 * process.env.WECOM_API_BASE = sim.url;
 * // ... later
 * await sim.stop();
 */
export async function startWecomSimulator(opts: SimulatorOptions): Promise<WecomSimulator> {
  const corp = new Corp(opts);
  const faults = new Faults(opts.random ?? Math.random);
  const log = new RequestLog(REQUEST_LOG_CAPACITY);
  const callbackTargets = new CallbackTargets();

  const click = async (req: ClickRequest) => {
    const c = corp.click(req);
    const target = callbackTargets.of(c.card.corpId, c.card.agentId);
    const delivery = await postEvent(target, clickXml(c, corp.now()), corp.now());
    return {
      status: delivery.status,
      attempts: delivery.attempts,
      responseCode: c.responseCode,
      eventKey: c.key,
      taskId: c.card.taskId ?? '',
    };
  };
  const reply = async (req: { userId: string; content: string; agentId?: number; corpId?: string }) => {
    const target = callbackTargets.of(req.corpId, req.agentId);
    const { xml, msgId } = replyXml(target, req.userId, req.content, corp.now());
    const delivery = await postEvent(target, xml, corp.now());
    return { status: delivery.status, attempts: delivery.attempts, msgId };
  };
  const held = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  const inboxUi = new InboxUi();
  /** Bumped by whatever changes an inbox; `GET /__sim/stream` tells open inbox pages. */
  let version = 0;
  const streams = new Set<ServerResponse>();
  const changed = (): void => {
    version++;
    for (const res of streams) res.write(`event: change\ndata: {"version":${version}}\n\n`);
  };
  const timeline = (userId: string) =>
    memberTimeline({
      userid: userId,
      version,
      inbox: corp.inbox(userId),
      drops: corp.drops(),
      duplicates: corp.duplicates(),
      undelivered: corp.undelivered(),
    });
  /** Server-sent events: one `change` per inbox change, so the page refetches instead of polling. */
  const openStream = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.write(`retry: 1000\nevent: change\ndata: {"version":${version}}\n\n`);
    streams.add(res);
    req.once('close', () => streams.delete(res));
  };
  let latencyMs = opts.latencyMs ?? DEFAULT_LATENCY_MS;
  let stopped = false;

  const setLatency = (ms: number): void => {
    if (!Number.isFinite(ms) || ms < 0) throw new InspectionRequestError('latency must be >= 0 ms', { ms });
    latencyMs = ms;
  };

  const answerApi = (res: ServerResponse, ctx: RequestContext, body: ApiAnswer): void => {
    ctx.errcode = body.errcode;
    corp.recordAnswer(body.errcode);
    // WeCom answers its own errors with HTTP 200; only the errcode tells them apart.
    writeJson(res, 200, body);
  };

  const hold = (res: ServerResponse): void => {
    const entry = { res, timer: setTimeout(() => res.socket?.destroy(), HOLD_CAP_MS) };
    held.add(entry);
    res.once('close', () => {
      clearTimeout(entry.timer);
      held.delete(entry);
    });
  };

  const runApi = (route: ApiRoute, call: ApiCall): ApiAnswer => {
    const answer = callApi(route, call);
    if (['send', 'recall', 'updateCard', 'robotSend'].includes(route.path)) changed();
    return answer;
  };

  const callApi = (route: ApiRoute, { query, body, raw, contentType, ip }: ApiCall): ApiAnswer => {
    const banned = corp.ipBanned(ip);
    if (banned !== undefined) return banned;
    if (route.path === 'robotSend') return corp.robotSend(query.get('key'), body);
    if (route.path === 'robotUpload')
      return corp.robotUpload(query.get('key'), query.get('type'), parseMultipart(contentType, raw));
    if (route.path === 'gettoken') return corp.gettoken(query.get('corpid'), query.get('corpsecret'), ip);
    if (route.path === 'send') return corp.send(query.get('access_token'), body);
    if (route.contacts !== undefined) return corp.contacts(route.contacts, query.get('access_token'), query);
    if (route.path === 'updateCard') return corp.updateTemplateCard(query.get('access_token'), body);
    return corp.recall(query.get('access_token'), body);
  };

  const applyFault = (
    fault: FaultKind,
    route: ApiRoute,
    call: ApiCall,
    req: IncomingMessage,
    res: ServerResponse,
    ctx: RequestContext,
  ): void => {
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'http500') {
      // What a broken gateway in front of WeCom returns: an HTML page, not JSON.
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html><body><h1>500 Internal Server Error</h1></body></html>');
      return;
    }
    if (fault === 'timeout') {
      hold(res);
      return;
    }
    if (fault === 'timeoutAfterDelivery' || fault === 'resetAfterDelivery') {
      // The call takes effect (the message reaches the inboxes and uses up the limits) but the answer never
      // arrives: the "unknown outcome" a sender must resolve without making WeCom deliver twice.
      runApi(route, call);
      if (fault === 'timeoutAfterDelivery') hold(res);
      else req.socket.destroy();
      return;
    }
    if (fault.errcode === ERRCODE.accessTokenExpired) corp.revokeToken(call.query.get('access_token'));
    answerApi(res, ctx, { errcode: fault.errcode, errmsg: errmsgFor(fault.errcode, 'injected fault') });
  };

  const handleApi = async (
    route: ApiRoute,
    query: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
    ctx: RequestContext,
  ): Promise<void> => {
    const raw = route.path === 'gettoken' ? Buffer.alloc(0) : await readRawBody(req);
    const ip = clientIp(req);
    const call: ApiCall = {
      query,
      body: raw.toString('utf8'),
      raw,
      contentType: req.headers['content-type'],
      ip,
    };
    corp.countCall(route.path, ip);
    if (latencyMs > 0) await sleep(latencyMs);
    if (stopped || res.destroyed) return;
    const fault = faults.next(route.path);
    if (fault !== undefined) applyFault(fault, route, call, req, res, ctx);
    else answerApi(res, ctx, runApi(route, call));
  };

  const handleInspection = async (path: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const route = path.slice('/__sim/'.length);
    if (req.method === 'GET') {
      if (route === 'stats') return writeJson(res, 200, corp.stats());
      if (route === 'drops') return writeJson(res, 200, corp.drops());
      if (route === 'duplicates') return writeJson(res, 200, corp.duplicates());
      if (route === 'requests') return writeJson(res, 200, log.list());
      if (route === 'readings') return writeJson(res, 200, corp.readings());
      if (route === 'directory') return writeJson(res, 200, corp.directory());
      if (route === 'members') return writeJson(res, 200, corp.members());
      if (route === 'groups') return writeJson(res, 200, corp.groups());
      if (route.startsWith('groups/'))
        return writeJson(res, 200, corp.groupInbox(decodeURIComponent(route.slice('groups/'.length))));
      if (route === 'stream') return openStream(req, res);
      if (route.startsWith('timeline/'))
        return writeJson(res, 200, timeline(decodeURIComponent(route.slice('timeline/'.length))));
      if (route.startsWith('inbox/'))
        return writeJson(res, 200, corp.inbox(decodeURIComponent(route.slice(6))));
    }
    if (req.method === 'POST') {
      const raw = await readBody(req);
      const body = raw.trim() === '' ? {} : parseJsonObject(raw);
      if (body === undefined) throw new InspectionRequestError('body must be a JSON object');
      if (route === 'click') return writeJson(res, 200, await click(parseClick(body)));
      if (route === 'reply') return writeJson(res, 200, await reply(parseReply(body)));
      const answer = postInspection(route, body);
      if (answer !== undefined) return writeJson(res, 200, answer);
    }
    writeJson(res, 404, { error: 'not found', code: 'SIM_NOT_FOUND' });
  };

  /** The POST routes of the inspection API; undefined for an unknown route. */
  const postInspection = (route: string, body: Record<string, unknown>): unknown => {
    switch (route) {
      case 'reset':
        simulator.reset();
        return { ok: true };
      case 'invalidate-tokens':
        corp.revokeAllTokens();
        return { ok: true };
      case 'latency':
        setLatency(typeof body.ms === 'number' ? body.ms : Number.NaN);
        return { ok: true, latencyMs };
      case 'faults':
        applyFaultRequest(body);
        return { ok: true };
      case 'readings':
        return corp.setReadings(body);
      case 'directory':
        corp.setDirectory(parseDirectory(body));
        changed();
        return corp.directory();
      case 'robots':
        corp.setRobots(parseRobots(body));
        changed();
        return corp.groups();
      case 'clock':
        return applyClockRequest(body);
      default:
        return undefined;
    }
  };

  /** `{ offsetMs }` sets WeCom's clock offset, `{ advanceMs }` adds to it. */
  const applyClockRequest = (body: Record<string, unknown>) => {
    const { offsetMs, advanceMs } = body;
    const given = offsetMs ?? advanceMs;
    if (
      (offsetMs === undefined) === (advanceMs === undefined) ||
      typeof given !== 'number' ||
      !Number.isFinite(given)
    )
      throw new InspectionRequestError('give either offsetMs or advanceMs, a finite number of ms');
    corp.setClockOffset(offsetMs === undefined ? corp.clockOffsetMs + given : given);
    return { now: corp.now(), offsetMs: corp.clockOffsetMs };
  };

  const applyFaultRequest = (body: Record<string, unknown>): void => {
    if (body.clear === true) faults.clear();
    const rate = body.rate as Record<string, unknown> | undefined;
    if (rate !== undefined) {
      if (typeof rate.rate !== 'number') throw new InspectionRequestError('rate.rate must be a number');
      faults.setRate(parseFaultKind(rate.kind), rate.rate, { path: parseFaultPath(rate.path) });
    }
    const script = body.script as Record<string, unknown> | undefined;
    if (script !== undefined) {
      if (!Array.isArray(script.kinds)) throw new InspectionRequestError('script.kinds must be an array');
      if (script.times !== undefined && typeof script.times !== 'number')
        throw new InspectionRequestError('script.times must be a number');
      const kinds = script.kinds.map((k: unknown) => (k === 'ok' ? 'ok' : parseFaultKind(k)));
      faults.script(kinds, { path: parseFaultPath(script.path), times: script.times as number | undefined });
    }
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    const at = corp.now();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);

    if (req.method === 'GET' && (path === INBOX_UI_PATH || path.startsWith(`${INBOX_UI_PATH}/`))) {
      inboxUi.serve(path).then(
        (page) => {
          const answer = page ?? {
            statusCode: 404,
            headers: { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' },
            body: 'not found',
          };
          res.writeHead(answer.statusCode, answer.headers);
          res.end(answer.body);
        },
        () => {
          res.writeHead(500, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
          res.end('the inbox page could not be built (esbuild); see web/inbox\n');
        },
      );
      return;
    }

    if (path.startsWith('/__sim/')) {
      handleInspection(path, req, res).catch((err: unknown) => {
        if (res.headersSent) return;
        if (err instanceof SimulatorError) writeJson(res, 400, { error: err.message, code: err.code });
        else writeJson(res, 500, { error: 'internal error', code: 'SIM_INTERNAL' });
      });
      return;
    }

    const ctx: RequestContext = { errcode: null };
    const userAgent = req.headers['user-agent'];
    res.once('close', () => {
      log.push({
        at,
        path,
        errcode: ctx.errcode,
        httpStatus: res.headersSent ? res.statusCode : 0,
        durationMs: performance.now() - started,
        ...(userAgent !== undefined && { userAgent }),
      });
    });
    const apiRoute = API_ROUTES[path];
    if (apiRoute === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const query = new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1));
    handleApi(apiRoute, query, req, res, ctx).catch(() => {
      // Only an oversized or aborted body gets here; WeCom would drop such a connection too.
      res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const url = `http://${host}:${address.port}`;
  const simulator: WecomSimulator = {
    url,
    inboxUrl: `${url}${INBOX_UI_PATH}`,
    warmInbox: async () => {
      await inboxUi.warm();
    },
    faults,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const res of streams) res.end();
      streams.clear();
      for (const entry of held) {
        clearTimeout(entry.timer);
        entry.res.socket?.destroy();
      }
      held.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    reset() {
      corp.reset();
      faults.clear();
      log.clear();
      changed();
    },
    setLatency,
    stats: () => corp.stats(),
    inbox: (userId) => corp.inbox(userId),
    groups: () => corp.groups(),
    groupInbox: (robot) => corp.groupInbox(robot),
    setRobots: (robots) => {
      corp.setRobots(robots);
      changed();
    },
    members: () => corp.members(),
    timeline,
    drops: () => corp.drops(),
    duplicates: () => corp.duplicates(),
    requests: () => log.list(),
    invalidateTokens: () => corp.revokeAllTokens(),
    readings: () => corp.readings(),
    setReadings: (input) => corp.setReadings(input),
    directory: () => corp.directory(),
    setDirectory: (d) => corp.setDirectory(parseDirectory(d)),
    setClockOffset: (ms) => {
      if (!Number.isFinite(ms))
        throw new InspectionRequestError('clock offset must be a finite number', { ms });
      corp.setClockOffset(ms);
    },
    sendCallback: (args) => sendCallback(args, corp.now()),
    setCallbackTargets: (targets) => callbackTargets.set(targets),
    click,
    reply,
  };
  return simulator;
}

const optionalString = (body: Record<string, unknown>, name: string): string | undefined => {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new InspectionRequestError(`${name} must be a string`);
  return value;
};

/** `POST /__sim/click {userid, task_id | msgid, key?, menu?, selected_items?: {question_key: [option_id]}}`. */
function parseClick(body: Record<string, unknown>): ClickRequest {
  const userId = optionalString(body, 'userid');
  if (!userId) throw new InspectionRequestError('userid is required');
  const taskId = optionalString(body, 'task_id');
  const msgid = optionalString(body, 'msgid');
  if (!taskId && !msgid) throw new InspectionRequestError('give task_id or msgid of the card');
  const key = optionalString(body, 'key');
  const selected = body.selected_items;
  if (
    selected !== undefined &&
    (typeof selected !== 'object' ||
      selected === null ||
      !Object.values(selected).every(
        (ids) => Array.isArray(ids) && ids.every((id) => typeof id === 'string'),
      ))
  ) {
    throw new InspectionRequestError('selected_items must map question keys to arrays of option ids');
  }
  return {
    userId,
    ...(taskId ? { taskId } : {}),
    ...(msgid ? { msgid } : {}),
    ...(key ? { key } : {}),
    ...(body.menu === true ? { menu: true } : {}),
    ...(selected ? { selected: selected as Record<string, string[]> } : {}),
  };
}

const ROBOT_STATES: readonly SimRobotState[] = ['active', 'removed', 'disabled', 'not_in_group'];

/** `POST /__sim/robots {robots: [{key, name?, state?}]}`: robots to add, or whose state changes. */
function parseRobots(body: Record<string, unknown>): SimRobot[] {
  if (!Array.isArray(body.robots)) throw new InspectionRequestError('robots must be an array');
  return body.robots.map((r: unknown) => {
    if (typeof r !== 'object' || r === null) throw new InspectionRequestError('each robot must be an object');
    const { key, name, state } = r as Record<string, unknown>;
    if (typeof key !== 'string' || key === '') throw new InspectionRequestError('a robot needs its key');
    if (name !== undefined && typeof name !== 'string')
      throw new InspectionRequestError('name must be a string');
    if (state !== undefined && !ROBOT_STATES.includes(state as SimRobotState))
      throw new InspectionRequestError(`state must be one of ${ROBOT_STATES.join(', ')}`);
    return { key, ...(name ? { name } : {}), ...(state ? { state: state as SimRobotState } : {}) };
  });
}

/** `POST /__sim/reply {userid, content, agentid?}`. */
function parseReply(body: Record<string, unknown>): { userId: string; content: string; agentId?: number } {
  const userId = optionalString(body, 'userid');
  const content = optionalString(body, 'content');
  if (!userId || !content) throw new InspectionRequestError('userid and content are required');
  const agentId = body.agentid;
  if (agentId !== undefined && !Number.isInteger(agentId))
    throw new InspectionRequestError('agentid must be an integer');
  return { userId, content, ...(typeof agentId === 'number' ? { agentId } : {}) };
}
