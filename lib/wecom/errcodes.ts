/**
 * WeCom errcode classes (全局错误码, https://developer.work.weixin.qq.com/document/path/90313). Responses are
 * classified by errcode only; errmsg is free text that WeCom changes.
 */
export type ErrcodeClass = 'ok' | 'token' | 'retryable' | 'rateLimited' | 'config' | 'permanent';

/** 40014 invalid token, 42001 token expired, 41001 token missing: refresh once and retry once. */
export const TOKEN_ERRCODES: ReadonlySet<number> = new Set([40014, 42001, 41001]);
/** -1 system busy, 45033 too many concurrent calls, 6000 data version conflict. */
export const RETRYABLE_ERRCODES: ReadonlySet<number> = new Set([-1, 45033, 6000]);
/** 45009 api freq out of limit: WeCom blocks the app for the rest of the window. */
export const RATE_LIMITED_ERRCODES: ReadonlySet<number> = new Set([45009]);
/**
 * A group robot's key the operator must fix (path/91770; texts from 全局错误码): 93000 "机器人webhookurl不合法或者
 * 机器人已经被移除出群" (a wrong key — often a whole URL pasted where a tool wanted the key, or the reverse — or the
 * robot was removed from its group), 93004 "机器人被停用" (disabled), 93008 "不在群里" (not in the group).
 */
export const ROBOT_CONFIG_ERRCODES: ReadonlySet<number> = new Set([93000, 93004, 93008]);

/**
 * Misconfiguration the operator must fix: 40001 bad secret (not a token error in WeCom!), 40013 bad corpid,
 * 40056 bad agentid, 48002 API forbidden, 60020 IP not in the app's trusted IP list, 301002 no permission; and a
 * robot's {@link ROBOT_CONFIG_ERRCODES}.
 */
export const CONFIG_ERRCODES: ReadonlySet<number> = new Set([
  40001,
  40013,
  40056,
  48002,
  60020,
  301002,
  ...ROBOT_CONFIG_ERRCODES,
]);

export function classifyErrcode(errcode: number): ErrcodeClass {
  if (errcode === 0) return 'ok';
  if (TOKEN_ERRCODES.has(errcode)) return 'token';
  if (RETRYABLE_ERRCODES.has(errcode)) return 'retryable';
  if (RATE_LIMITED_ERRCODES.has(errcode)) return 'rateLimited';
  if (CONFIG_ERRCODES.has(errcode)) return 'config';
  return 'permanent';
}

/** An operator-facing hint for errcodes whose fix is outside the gateway. */
export function errcodeHint(errcode: number, errmsg?: string): string | undefined {
  switch (errcode) {
    case 60020: {
      // WeCom's errmsg for 60020 carries the caller's IP ("not allow to access from your ip, ... from ip: 1.2.3.4").
      const ip = errmsg?.match(/from ip:?\s*([0-9a-f.:]+)/i)?.[1];
      return `WeCom rejected the sender's IP${ip ? ` ${ip}` : ''}: add it to the app's trusted IP list (企业可信IP) in the WeCom admin console; deploy with -c egress=fixed to get a fixed IP`;
    }
    case 40001:
      return 'the app secret is wrong: copy it again from the WeCom admin console into the gateway config';
    case 40013:
      return 'the corpId is wrong: check "My Company" (我的企业) in the WeCom admin console';
    case 40056:
    case 301002:
      return 'the agentId does not match the secret or the app lacks permission: check the app in the admin console';
    case 48002:
      return 'the API is forbidden for this app: check the app permissions in the admin console';
    case 93000:
      return "WeCom does not know the robot's key, or the robot was removed from its group: copy the key (or the whole webhook URL) again from the robot's page in the group chat into robots.<name>.key";
    case 93004:
      return 'the robot is disabled: enable it again in the group chat (group settings › 消息推送 / 群机器人)';
    case 93008:
      return 'the robot is not in its group chat any more: add it to the group again, then copy its new key';
    default:
      return undefined;
  }
}
