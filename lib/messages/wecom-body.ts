import { LIMITS } from './limits.js';
import type { MessageRequest } from './types.js';

/**
 * Builds the exact WeCom `message/send` JSON body: recipients joined with `|` (only the non-empty
 * ones), `agentid` from the app's configuration, the msgtype object unchanged, and the send flags.
 *
 * `enable_duplicate_check` is sent only when the client asked for it or the sender forces it for a
 * redelivery whose first attempt may have reached WeCom (SPEC §4): turning it on for every message
 * would make WeCom swallow legitimate repeats. A forced check looks back as far as WeCom allows (4 h),
 * unless the client asked for the check with its own interval. Keys are always emitted in the same
 * order, so a retry produces byte-identical JSON — which is what WeCom's duplicate check compares
 * ("同样内容(请求json)的消息").
 *
 * @example
 * toWecomSendBody(req, 1000002, { forceDuplicateCheck: true });
 * // { touser: 'zhangsan|lisi', msgtype: 'text', agentid: 1000002, text: { content: '…' },
 * //   enable_duplicate_check: 1, duplicate_check_interval: 14400 }
 */
export function toWecomSendBody(
  req: MessageRequest,
  agentid: number,
  opts: { forceDuplicateCheck?: boolean } = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const { touser, toparty, totag } = req.recipients;
  if (touser.length > 0) body.touser = touser.join('|');
  if (toparty.length > 0) body.toparty = toparty.join('|');
  if (totag.length > 0) body.totag = totag.join('|');
  body.msgtype = req.msgtype;
  body.agentid = agentid;
  body[req.msgtype] = req.content;

  const { safe, enable_id_trans, enable_duplicate_check, duplicate_check_interval } = req.options;
  if (safe !== undefined) body.safe = safe;
  if (enable_id_trans !== undefined) body.enable_id_trans = enable_id_trans;
  if (enable_duplicate_check === 1) {
    body.enable_duplicate_check = 1;
    if (duplicate_check_interval !== undefined) body.duplicate_check_interval = duplicate_check_interval;
  } else if (opts.forceDuplicateCheck === true) {
    body.enable_duplicate_check = 1;
    body.duplicate_check_interval = LIMITS.options.maxDuplicateCheckIntervalSeconds;
  }
  return body;
}

/**
 * Number of recipient entries (touser + toparty + totag), used to estimate person-times against the
 * per-app daily quota before sending. A party, a tag and `@all` each count as 1 here although WeCom
 * charges one person-time per member reached, so this is a lower bound for those; the member count
 * behind them is only known to WeCom.
 */
export function countRecipients(req: MessageRequest): number {
  const { touser, toparty, totag } = req.recipients;
  return touser.length + toparty.length + totag.length;
}
