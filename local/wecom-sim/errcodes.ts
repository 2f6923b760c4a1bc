/**
 * WeCom errcodes the simulator answers with, checked against the global errcode list
 * (https://developer.work.weixin.qq.com/document/path/90455). The errmsg texts imitate WeCom's English
 * ones; clients must branch on errcode only, as WeCom itself warns that errmsg may change.
 */
export const ERRCODE = {
  systemBusy: -1,
  ok: 0,
  invalidSecret: 40001,
  invalidMediaId: 40007,
  invalidMsgType: 40008,
  invalidCorpId: 40013,
  invalidAccessToken: 40014,
  invalidUserIdListSize: 40032,
  invalidParameter: 40035,
  invalidAgentId: 40056,
  /** 不合法的标签ID (assumed for an unknown tagid in tag/get). */
  invalidTagId: 40068,
  missingAccessToken: 41001,
  missingCorpId: 41002,
  missingSecret: 41004,
  missingAgentId: 41011,
  accessTokenExpired: 42001,
  /** 更新的消息的应用与发送消息的应用不匹配 (update_template_card). */
  cardAppMismatch: 42015,
  /** Recall of a message older than 24 h (SPEC §5). */
  recallTooLate: 42052,
  emptyContent: 44004,
  contentTooLong: 45002,
  /** 图文消息的文章数量不符合系统限制: news/mpnews must have 1–8 articles. */
  articleCountOutOfLimit: 45008,
  apiFreqOutOfLimit: 45009,
  /** 参数为空: a required field is missing. */
  emptyParameter: 40063,
  dataFormatError: 47001,
  /** API接口无权限调用: e.g. user/list_id, which "仅支持通过通讯录同步secret调用". */
  apiForbidden: 48002,
  /** 部门不存在 (assumed for an unknown department_id). */
  departmentNotFound: 60003,
  /** 指定的成员/部门/标签参数无权限: outside the app's visible range (可见范围). */
  noContactPrivilege: 60011,
  /** 无效的response_code: unknown, used already, or expired (update_template_card). */
  invalidResponseCode: 60140,
  allRecipientsInvalid: 81013,
  /** 指定的更新对象不在多人消息内 (update_template_card). */
  notInMessage: 82102,
  /** 无权限操作指定的应用: the body's agentid is not the app the access_token was issued for. */
  noPrivilegeForApp: 301002,
} as const;

const ERRMSG: Record<number, string> = {
  [-1]: 'system busy',
  0: 'ok',
  40001: 'invalid credential',
  40007: 'invalid media_id',
  40008: 'invalid message type',
  40013: 'invalid corpid',
  40014: 'invalid access_token',
  40032: 'invalid userid list size',
  40035: 'invalid parameter',
  40056: 'invalid agentid',
  40068: 'invalid tagid',
  41001: 'access_token missing',
  41002: 'corpid missing',
  41004: 'corpsecret missing',
  41011: 'agentid missing',
  42001: 'access_token expired',
  42015: 'the app updating the card is not the app that sent it',
  42052: 'message recall time out',
  44004: 'empty content',
  45002: 'content size out of limit',
  45008: 'article count out of limit',
  45009: 'api freq out of limit',
  40063: 'some parameters are empty',
  47001: 'data format error',
  48002: 'api forbidden',
  60003: 'department not found',
  60011: 'no privilege to access/modify contact/party/agent',
  60140: 'invalid response_code',
  81013: 'user & party & tag all invalid',
  82102: 'update target not in the message',
  301002: 'api forbidden for this agentid',
};

/** WeCom appends a hint and a lookup link to every non-zero errmsg; clients must not parse it. */
export function errmsgFor(errcode: number, detail?: string): string {
  if (errcode === 0) return 'ok';
  const base = ERRMSG[errcode] ?? 'simulated error';
  const withDetail = detail === undefined ? base : `${base}: ${detail}`;
  return `${withDetail}, hint: [wecom-sim], more info at https://open.work.weixin.qq.com/devtool/query?e=${errcode}`;
}

export type ApiAnswer = Record<string, unknown> & { errcode: number; errmsg: string };

export function apiAnswer(errcode: number, detail?: string, extra: Record<string, unknown> = {}): ApiAnswer {
  return { errcode, errmsg: errmsgFor(errcode, detail), ...extra };
}
