import { LIMITS } from './limits.js';
import type { AppMessageRequest } from './types.js';

/**
 * Builds the exact WeCom `message/send` JSON body: recipients joined with `|` (only the non-empty
 * ones), `agentid` from the app's configuration, the msgtype object unchanged, and the send flags.
 *
 * WeCom's duplicate check is what makes a resend after a lost answer safe, and WeCom's wording
 * ("同样内容(请求json)的消息") allows a reading in which it compares only flagged requests with flagged
 * requests, byte for byte. So every attempt of a message is the same request: flagged from the first
 * attempt with the interval fixed when the message was accepted (`duplicateCheckSeconds`, the client's
 * own interval when it asked for the check), keys always in the same order. `duplicateCheckSeconds: 0`
 * (the client opted out) sends no flag. `forceDuplicateCheck` is for messages queued before the interval
 * was fixed at acceptance: their resends are flagged with the longest interval, as they always were.
 *
 * @example
 * toWecomSendBody(req, 1000002, { duplicateCheckSeconds: 3600 });
 * // { touser: 'zhangsan|lisi', msgtype: 'text', agentid: 1000002, text: { content: '…' },
 * //   enable_duplicate_check: 1, duplicate_check_interval: 3600 }
 */
export function toWecomSendBody(
  req: AppMessageRequest,
  agentid: number,
  opts: { duplicateCheckSeconds?: number; forceDuplicateCheck?: boolean } = {},
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
  } else if (opts.duplicateCheckSeconds !== undefined) {
    if (opts.duplicateCheckSeconds > 0) {
      body.enable_duplicate_check = 1;
      body.duplicate_check_interval = opts.duplicateCheckSeconds;
    }
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
export function countRecipients(req: AppMessageRequest): number {
  const { touser, toparty, totag } = req.recipients;
  return touser.length + toparty.length + totag.length;
}
