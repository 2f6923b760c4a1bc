import type { AppStatus, Reach, ReachQuery } from './api.js';
import type { GatewayConfig } from './domain.js';
import { errcodeHint } from './domain.js';
import { ApiError, CliError } from './errors.js';
import { PACKED } from './packaging.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `doctor`: what was checked, what was found and, unless ok, what to do. */
export interface Check {
  status: CheckStatus;
  /** `config`, `gateway`, `ops: gettoken`, … */
  name: string;
  detail: string;
  fix?: string;
}

/** Recipients by WeCom's field names, as GET /v1/apps/{app}/reach is asked about them. */
export interface Recipients extends ReachQuery {
  touser: string[];
  toparty: string[];
  totag: string[];
}

/** What doctor reads; the command wires it to the gateway's API, the config and (locally) the simulator. */
export interface DoctorInputs {
  /** `local stack` or `stage prod`. */
  where: 'local' | 'stage';
  /** The config, or why it could not be read or is not valid. */
  config: { label: string; config?: GatewayConfig; problems: string[]; placeholders: string[] };
  /** GET /v1/apps/{app} through the gateway (its token state is the gateway's own, from its egress). */
  appState: (app: string) => Promise<AppStatus>;
  /**
   * GET /v1/apps/{app}/reach through the gateway: which recipients are outside the app's visible range, read with
   * WeCom's agent/get from the gateway itself (on a stage: its egress, the one IP WeCom answers).
   */
  reach: (app: string, ids: Recipients) => Promise<Reach>;
  /** The gateway's URL, for the callback URL to paste into WeCom. */
  apiUrl: string;
}

const SEND_TEST = (app: string) =>
  `send one message (wecom-gateway send --app ${app} --to <your userid> --text test), then run doctor again`;

const split = (v: unknown): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v.map(String) : String(v).split('|').filter(Boolean);

/** Everyone the config names as a recipient of an app: hook defaults, hook rules and push keys. */
export function configuredRecipients(config: GatewayConfig, app: string): Recipients {
  const r = { users: new Set<string>(), parties: new Set<string>(), tags: new Set<string>() };
  const add = (to: { touser?: unknown; toparty?: unknown; totag?: unknown } | undefined) => {
    if (!to) return;
    for (const u of split(to.touser)) r.users.add(u);
    for (const p of split(to.toparty)) r.parties.add(p);
    for (const t of split(to.totag)) r.tags.add(t);
  };
  for (const hook of Object.values(config.hooks ?? {})) {
    if (hook.app !== app) continue;
    add(hook.to);
    for (const rule of hook.rules ?? []) add(rule.to);
  }
  for (const key of config.pushKeys ?? []) if (key.app === app) add(key.to);
  // `@all` is everyone in the range: inside it by definition.
  r.users.delete('@all');
  return { touser: [...r.users], toparty: [...r.parties], totag: [...r.tags] };
}

/** Hooks and push keys of an app that send markdown (their own msgtype, or the source's default). */
function markdownSenders(config: GatewayConfig, app: string): string[] {
  const names: string[] = [];
  for (const [name, hook] of Object.entries(config.hooks ?? {})) {
    const byDefault = ['alertmanager', 'grafana', 'generic'].includes(hook.source);
    if (hook.app === app && (hook.msgtype === 'markdown' || (hook.msgtype === undefined && byDefault))) {
      names.push(`hook ${name}`);
    }
  }
  for (const key of config.pushKeys ?? []) {
    if (key.app === app && key.msgtype === 'markdown') names.push(`push key ${key.name}`);
  }
  return names;
}

function configCheck(c: DoctorInputs['config']): Check {
  if (!c.config) {
    return {
      status: 'fail',
      name: 'config',
      detail: `${c.label} is not valid: ${c.problems.join('; ')}`,
      fix: `wecom-gateway config check --file ${c.label} names every bad field`,
    };
  }
  if (c.placeholders.length > 0) {
    return {
      status: 'warn',
      name: 'config',
      detail: `${c.label} is valid but still holds placeholders: ${c.placeholders.join(', ')}`,
      fix: 'fill them in from the WeCom admin console (see the $comment in the file)',
    };
  }
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const cfg = c.config;
  return {
    status: 'ok',
    name: 'config',
    detail: `${c.label} is valid (${count(Object.keys(cfg.apps).length, 'app')}, ${count(cfg.apiKeys.length, 'API key')}, ${count(Object.keys(cfg.hooks ?? {}).length, 'hook')}, ${count((cfg.pushKeys ?? []).length, 'push key')})`,
  };
}

function stateCheck(app: string, s: AppStatus): Check {
  const name = `${app}: state`;
  const p = s.pause;
  const errcode = p?.errcode !== null && p?.errcode !== undefined ? `errcode ${p.errcode}: ` : '';
  switch (s.state) {
    case 'active':
      return { status: 'ok', name, detail: 'active: messages go out' };
    case 'paused':
      return {
        status: 'warn',
        name,
        detail: `paused until ${p?.until} (${errcode}${p?.reason ?? 'rate limited'})`,
        fix: 'WeCom limited the app (45009); messages wait and go out by themselves; lower the app quota if it recurs',
      };
    case 'probing':
      return {
        status: 'warn',
        name,
        detail: `probing: the pause ended (${errcode}${p?.reason ?? ''}); the next message tests whether the cause is gone`,
        fix: SEND_TEST(app),
      };
    default:
      return {
        status: 'fail',
        name,
        detail: `circuit open since ${p?.since} (${errcode}${p?.reason ?? 'configuration error'}); waiting messages fail at ${p?.fails_messages_at ?? p?.until}`,
        fix: `${p?.hint ?? 'fix the app in the WeCom admin console or the config'}; then send a message: after ${p?.until} the gateway tries again`,
      };
  }
}

function tokenCheck(app: string, s: AppStatus, where: DoctorInputs['where']): Check {
  const name = `${app}: gettoken`;
  const from = where === 'stage' ? "from the stage's egress" : 'from the local gateway';
  const err = s.token.last_error;
  if (err) {
    const hint = err.errcode !== null ? errcodeHint(err.errcode) : undefined;
    return {
      status: 'fail',
      name,
      detail: `gettoken ${from} failed ${err.failures}× (${err.errcode !== null ? `errcode ${err.errcode}` : err.class}); next try ${err.retry_at}`,
      fix: hint ?? 'check corpId and secret of the app in the config against the WeCom admin console',
    };
  }
  if (s.token.fetched_at === null) {
    return { status: 'warn', name, detail: `no token fetched ${from} yet`, fix: SEND_TEST(app) };
  }
  return {
    status: 'ok',
    name,
    detail: `works ${from}: token ${s.token.age_seconds} s old, valid ${s.token.expires_in_seconds} s more`,
  };
}

function trustedIpCheck(
  app: string,
  s: AppStatus,
  where: DoctorInputs['where'],
  reach: Reach | Error | undefined,
): Check {
  const name = `${app}: trusted IP`;
  const codes = [s.pause?.errcode, s.token.last_error?.errcode];
  if (reach instanceof ApiError && reach.code === IP_NOT_TRUSTED) {
    return {
      status: 'fail',
      name,
      detail: "WeCom answered 60020 to the gateway's agent/get: its IP is not in the app's trusted IPs",
      fix: reach.message,
    };
  }
  if (codes.includes(60020)) {
    return {
      status: 'fail',
      name,
      detail: "WeCom answered 60020: the gateway's IP is not in the app's trusted IPs",
      fix:
        s.pause?.hint ??
        errcodeHint(60020) ??
        "add the stage's egress IP to 企业可信IP (deploy with -c egress=fixed for a fixed one)",
    };
  }
  if (where === 'local') {
    return { status: 'ok', name, detail: 'not needed: the local simulator accepts every IP' };
  }
  if (reach !== undefined && !(reach instanceof Error)) {
    return { status: 'ok', name, detail: "WeCom answered the gateway's agent/get from the stage's egress" };
  }
  if (s.state === 'active' && s.token.fetched_at !== null) {
    return { status: 'ok', name, detail: 'WeCom has not answered 60020 (IP not in 企业可信IP)' };
  }
  return {
    status: 'warn',
    name,
    detail: 'not known until a message has been sent',
    fix: `apps created after 2022-06-20 need the egress IP in 应用管理 > the app > 企业可信IP (a stack deployed with -c egress=fixed has one); ${SEND_TEST(app)}`,
  };
}

function callbackCheck(
  app: string,
  config: GatewayConfig,
  apiUrl: string,
  where: DoctorInputs['where'],
): Check {
  const name = `${app}: callback`;
  const url = `${apiUrl}/v1/wecom/callback/${app}`;
  if (!config.apps[app]?.callback) {
    return {
      status: 'warn',
      name,
      detail: 'no callback configured',
      fix: `WeCom lets you set trusted IPs only once a callback URL (or trusted domain) is verified, and card clicks and replies need it: set apps.${app}.callback (token, encodingAESKey from 接收消息 > 设置API接收) and save the URL ${url} there`,
    };
  }
  return {
    status: 'ok',
    name,
    detail:
      where === 'local'
        ? `configured; the simulator posts callbacks to ${url}`
        : `configured; WeCom verifies ${url} when you save it under 接收消息 > 设置API接收 (it must answer before you can save)`,
  };
}

/** The gateway's error code for WeCom's 60020 to agent/get (lib/ingest reach.ts). */
const IP_NOT_TRUSTED = 'wecom_ip_not_trusted';

const RANGE_PATH = '应用管理 > the app > 可见范围';

const named = (ids: ReachQuery): string[] => [
  ...ids.touser.map((u) => `user ${u}`),
  ...ids.toparty.map((p) => `party ${p}`),
  ...ids.totag.map((t) => `tag ${t}`),
];

/** A gateway deployed before GET /v1/apps/{app}/reach existed: how the operator checks the range by hand. */
function rangeByHand(app: string, listed: string, why: string): Check {
  return {
    status: 'warn',
    name: `${app}: visible range`,
    detail: `not checked: the gateway answered ${why} to GET /v1/apps/${app}/reach (deployed before it had it; redeploy to check it here)`,
    fix: `check by hand that the WeCom admin console's ${RANGE_PATH} of ${app} covers ${listed}; or send each a test message (wecom-gateway send --app ${app} --to <userid> --text test --wait): wecom-gateway status <id> names those outside it as invaliduser`,
  };
}

function rangeCheck(app: string, wanted: Recipients, reach: Reach | Error | undefined): Check {
  const name = `${app}: visible range`;
  const listed = named(wanted).join(', ');
  if (reach === undefined)
    return { status: 'ok', name, detail: 'no recipients in the config to check (hooks, push keys)' };
  if (reach instanceof ApiError && reach.status === 404)
    return rangeByHand(app, listed, `404 (${reach.message})`);
  if (reach instanceof Error) {
    const untrusted = reach instanceof ApiError && reach.code === IP_NOT_TRUSTED;
    return {
      status: untrusted ? 'fail' : 'warn',
      name,
      detail: `could not read it (${reach.message})`,
      fix: untrusted
        ? "add the gateway's egress IP to the app's 企业可信IP (see the trusted IP line), then run doctor again"
        : `fix the errors above, or check that ${RANGE_PATH} covers ${listed}`,
    };
  }
  const outside = named(reach.outside);
  const unknown = named(reach.unknown);
  const unsure = `${unknown.join(', ')} not listed in the range, and one of its parties or tags may hold them (WeCom's agent/get does not say)`;
  if (outside.length > 0) {
    return {
      status: 'fail',
      name,
      detail: `${outside.join(', ')} outside the range${unknown.length > 0 ? `; ${unsure}` : ''}`,
      fix: `add them to 可见范围 in the WeCom admin console (${RANGE_PATH}); WeCom reports recipients outside it as invaliduser and sends nothing to them`,
    };
  }
  if (unknown.length > 0) {
    return {
      status: 'warn',
      name,
      detail: unsure,
      fix: `check in the WeCom admin console (${RANGE_PATH}) that its parties or tags hold them; or send each a test message (wecom-gateway send --app ${app} --to <userid> --text test --wait)`,
    };
  }
  return { status: 'ok', name, detail: `covers ${listed}` };
}

function markdownCheck(app: string, config: GatewayConfig): Check {
  const name = `${app}: WeChat plugin`;
  if (config.apps[app]?.markdownFallback) {
    return { status: 'ok', name, detail: `markdown is sent as ${config.apps[app]?.markdownFallback}` };
  }
  const senders = markdownSenders(config, app);
  if (senders.length === 0)
    return { status: 'ok', name, detail: 'no hook or push key of this app sends markdown' };
  return {
    status: 'warn',
    name,
    detail: `${senders.join(', ')} ${senders.length === 1 ? 'sends' : 'send'} markdown, which members reading in WeChat (微信插件) see as 暂不支持此消息类型`,
    fix: `set apps.${app}.markdownFallback to "text" (or "textcard") unless everyone reads in the WeCom app`,
  };
}

/**
 * The checks of `wecom-gateway doctor`, in order: config, gateway, then per app its state, gettoken (the gateway's
 * own token state: for a stage that is from its egress, not from the operator's machine), trusted IP, callback,
 * visible range and the WeChat plugin hint.
 */
export async function runDoctor(inputs: DoctorInputs): Promise<Check[]> {
  const checks: Check[] = [configCheck(inputs.config)];
  const config = inputs.config.config;
  if (!config) return checks;
  const apps = Object.keys(config.apps);
  const states = new Map<string, AppStatus | CliError>();
  for (const app of apps) {
    try {
      states.set(app, await inputs.appState(app));
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      states.set(app, err);
    }
  }
  const unreachable = [...states.values()].find((s) => s instanceof CliError && !(s instanceof ApiError));
  if (unreachable instanceof CliError) {
    checks.push({
      status: 'fail',
      name: 'gateway',
      detail: unreachable.message,
      fix:
        inputs.where === 'local'
          ? PACKED
            ? 'run this in a wecom-gateway checkout where `npm start` runs, or pass --url (--stage for a deployed stage)'
            : 'start it with `npm start` in this directory, or pass --url'
          : 'check --stage and --region',
    });
    return checks;
  }
  const denied = [...states.values()].find((s) => s instanceof ApiError && s.status === 401);
  if (denied instanceof ApiError) {
    checks.push({
      status: 'fail',
      name: 'gateway',
      detail: `${inputs.apiUrl} refused the API key (${denied.message})`,
      fix: 'pass --key (or set WECOM_GATEWAY_KEY) with a key of this gateway',
    });
    return checks;
  }
  checks.push({ status: 'ok', name: 'gateway', detail: `answers at ${inputs.apiUrl}` });
  for (const app of apps) {
    const state = states.get(app) as AppStatus | ApiError;
    if (state instanceof ApiError) {
      checks.push({
        status: 'warn',
        name: `${app}: state`,
        detail: `the API key may not read app ${app} (${state.status} ${state.code})`,
        fix: `use a key whose apps include ${app}`,
      });
    }
    const wanted = configuredRecipients(config, app);
    let reach: Reach | Error | undefined;
    // A key that may not read the app gets 404 from reach too, which would read as an older gateway.
    if (!(state instanceof ApiError) && named(wanted).length > 0) {
      reach = await inputs.reach(app, wanted).catch((err: unknown) => {
        if (err instanceof CliError) return err;
        throw err;
      });
    }
    if (!(state instanceof ApiError)) {
      checks.push(
        stateCheck(app, state),
        tokenCheck(app, state, inputs.where),
        trustedIpCheck(app, state, inputs.where, reach),
      );
    }
    checks.push(
      callbackCheck(app, config, inputs.apiUrl, inputs.where),
      state instanceof ApiError && named(wanted).length > 0
        ? {
            status: 'warn',
            name: `${app}: visible range`,
            detail: `not checked: the API key may not read app ${app}`,
            fix: `use a key whose apps include ${app}`,
          }
        : rangeCheck(app, wanted, reach),
      markdownCheck(app, config),
    );
  }
  return checks;
}

/** Doctor's exit code: 1 when any check failed, else 0 (warnings are advice). */
export const doctorExitCode = (checks: readonly Check[]): number =>
  checks.some((c) => c.status === 'fail') ? 1 : 0;
