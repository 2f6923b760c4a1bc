import { LIMITS } from './limits.js';
import type { Recipients, ValidationIssue } from './types.js';

/**
 * touser/toparty/totag accept WeCom's own `a|b|c` syntax (so existing payloads port unchanged) or
 * JSON arrays. Entries are trimmed (WeCom's examples write `PartyID1 | PartyID2`), empty entries are
 * rejected, duplicates removed. Issue fields index the entries after splitting: `touser[2]`.
 * An empty string or array means "none of this kind", like an absent field.
 *
 * Userids are case-insensitive in WeCom ("返回包中的userid,不区分大小写,统一转为小写", message/send,
 * https://developer.work.weixin.qq.com/document/path/90236): `ZhangSan` and `zhangsan` are one member, so they are
 * one recipient here (the first spelling is kept and sent; WeCom accepts any case) and one quota key in the sender
 * ({@link foldUserId}).
 */

export const ALL_USERS = '@all';

/**
 * The form of a userid that identifies its member: WeCom compares userids without regard to case and answers them
 * in lower case. Quota keys and recipient de-duplication use it; the WeCom body keeps the client's spelling.
 *
 * @example foldUserId('ZhangSan') === foldUserId('zhangsan') // true
 */
export const foldUserId = (userId: string): string => userId.toLowerCase();

type RecipientField = keyof Recipients;

interface FieldRule {
  field: RecipientField;
  noun: string;
  max: number;
  /** Returns an issue message for a bad entry, or undefined. */
  check: (entry: string) => string | undefined;
}

const R = LIMITS.recipients;
const NUMERIC_ID = new RegExp(`^\\d{1,${R.maxNumericIdDigits}}$`);
const utf8 = new TextEncoder();

const RULES: readonly FieldRule[] = [
  {
    field: 'touser',
    noun: 'users',
    max: R.maxUsers,
    check: (entry) => {
      const bytes = utf8.encode(entry).length;
      return bytes > R.maxUserIdBytes ? `${bytes} bytes, max ${R.maxUserIdBytes}` : undefined;
    },
  },
  {
    field: 'toparty',
    noun: 'parties',
    max: R.maxParties,
    check: (entry) => (NUMERIC_ID.test(entry) ? undefined : 'must be a numeric department id'),
  },
  {
    field: 'totag',
    noun: 'tags',
    max: R.maxTags,
    check: (entry) => (NUMERIC_ID.test(entry) ? undefined : 'must be a numeric tag id'),
  },
];

function splitEntries(raw: unknown, rule: FieldRule, issues: ValidationIssue[]): unknown[] {
  if (raw === undefined || raw === '') return [];
  if (typeof raw === 'string') return raw.split('|');
  if (Array.isArray(raw)) return raw;
  // Department and tag ids are integers in WeCom, so a lone number is a natural way to write one.
  if (rule.field !== 'touser' && typeof raw === 'number') return [raw];
  issues.push({ field: rule.field, message: 'must be a string like "a|b" or an array of strings' });
  return [];
}

function normalizeEntry(entry: unknown, rule: FieldRule): { value?: string; problem?: string } {
  let text: string;
  if (typeof entry === 'string') text = entry.trim();
  else if (
    rule.field !== 'touser' &&
    typeof entry === 'number' &&
    Number.isSafeInteger(entry) &&
    entry >= 0
  ) {
    text = String(entry);
  } else {
    return { problem: rule.field === 'touser' ? 'must be a string' : 'must be a string or integer id' };
  }
  if (text === '') return { problem: 'empty entry' };
  if (text.includes('|')) return { problem: 'must not contain |; use one array entry per recipient' };
  const problem = rule.check(text);
  return problem ? { problem } : { value: text };
}

/** Parses and checks the three recipient fields of a request body. */
export function parseRecipients(body: Record<string, unknown>): {
  recipients: Recipients;
  issues: ValidationIssue[];
} {
  const issues: ValidationIssue[] = [];
  const recipients: Recipients = { touser: [], toparty: [], totag: [] };

  for (const rule of RULES) {
    const entries = splitEntries(body[rule.field], rule, issues);
    // Identity → the first spelling seen; parties and tags are numeric, so folding only matters for userids.
    const unique = new Map<string, string>();
    entries.forEach((entry, index) => {
      const { value, problem } = normalizeEntry(entry, rule);
      if (problem) issues.push({ field: `${rule.field}[${index}]`, message: problem });
      else if (value !== undefined) {
        const identity = rule.field === 'touser' ? foldUserId(value) : value;
        if (!unique.has(identity)) unique.set(identity, value);
      }
    });
    if (unique.size > rule.max) {
      issues.push({ field: rule.field, message: `${unique.size} ${rule.noun}, max ${rule.max}` });
    }
    recipients[rule.field] = [...unique.values()];
  }

  // "指定为@all,则向关注该企业应用的全部成员发送": mixing it with userids is ambiguous.
  if (recipients.touser.includes(ALL_USERS) && recipients.touser.length > 1) {
    issues.push({ field: 'touser', message: `${ALL_USERS} must be the only entry` });
  }

  const total = recipients.touser.length + recipients.toparty.length + recipients.totag.length;
  if (total === 0 && issues.length === 0) {
    issues.push({ field: 'touser', message: 'required: set at least one of touser, toparty, totag' });
  }

  return { recipients, issues };
}
