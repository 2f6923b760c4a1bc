import type { ApiKeyConfig } from '#lib/config/index.js';
import { foldUserId, type ValidationIssue } from '#lib/messages/index.js';
import {
  errcodeHint,
  type RangeCoverage,
  type RecipientIds,
  rangeCoverage,
  WecomApiError,
  WecomError,
} from '#lib/wecom/index.js';
import { appFor } from './apps.js';
import { InvalidRequestError, RetryLaterError, StateConflictError } from './errors.js';
import type { IngestDeps } from './types.js';

/** GET /v1/apps/{app}/reach: of the ids the caller named, those outside the app's visible range, and when it was read. */
export interface ReachView extends RangeCoverage {
  app: string;
  /** When WeCom's agent/get answered (a container reuses an answer for a minute). */
  checked_at: string;
}

const FIELDS = ['touser', 'toparty', 'totag'] as const;
/** Per field: enough for every recipient a config names, small enough for one URL. */
export const MAX_REACH_IDS = 1000;
/** WeCom: a userid is 1–64 bytes; department and tag ids are 32-bit unsigned integers. */
const MAX_USERID_BYTES = 64;
const NUMERIC_ID = /^\d{1,10}$/;
/** WeCom: the caller's IP is not among the app's trusted IPs (企业可信IP). */
const IP_NOT_TRUSTED = 60020;

function entryProblem(field: (typeof FIELDS)[number], id: string): string | undefined {
  if (id === '') return 'empty entry';
  if (field !== 'touser') {
    return NUMERIC_ID.test(id)
      ? undefined
      : `must be a numeric ${field === 'toparty' ? 'department' : 'tag'} id`;
  }
  if (Buffer.byteLength(id) > MAX_USERID_BYTES) return `longer than ${MAX_USERID_BYTES} bytes`;
  // API Gateway joins a repeated parameter with commas, which no userid holds.
  if (id.includes(',')) return 'separate ids with |, in one touser parameter';
  return undefined;
}

/**
 * The query of GET /v1/apps/{app}/reach: `a|b` lists per field (WeCom's own syntax), at least one id, at most
 * {@link MAX_REACH_IDS} per field; a 400 naming every bad parameter otherwise.
 *
 * @example parseReachQuery({ touser: 'zhangsan|lisi', toparty: '2' }) // { touser: [...], toparty: ['2'], totag: [] }
 */
export function parseReachQuery(query: Readonly<Record<string, string | undefined>>): RecipientIds {
  const issues: ValidationIssue[] = [];
  const ids: RecipientIds = { touser: [], toparty: [], totag: [] };
  for (const name of Object.keys(query)) {
    if (!(FIELDS as readonly string[]).includes(name))
      issues.push({ field: name, message: `unknown parameter; use ${FIELDS.join(', ')}` });
  }
  for (const field of FIELDS) {
    const raw = query[field];
    if (raw === undefined || raw.trim() === '') continue;
    const seen = new Set<string>();
    raw.split('|').forEach((entry, index) => {
      const id = entry.trim();
      const problem = entryProblem(field, id);
      if (problem) issues.push({ field: `${field}[${index}]`, message: problem });
      else {
        // WeCom compares userids without case: one member, one entry (the first spelling).
        const identity = field === 'touser' ? foldUserId(id) : id;
        if (!seen.has(identity)) ids[field].push(id);
        seen.add(identity);
      }
    });
    if (ids[field].length > MAX_REACH_IDS)
      issues.push({ field, message: `${ids[field].length} ids, max ${MAX_REACH_IDS}` });
  }
  if (issues.length === 0 && FIELDS.every((f) => ids[f].length === 0))
    issues.push({ field: 'touser', message: 'required: name ids in at least one of touser, toparty, totag' });
  if (issues.length > 0) throw new InvalidRequestError('invalid_request', 'the query is invalid', issues);
  return ids;
}

/**
 * GET /v1/apps/{app}/reach: reads the app's visible range with `agent/get` (path/90227) from the gateway itself,
 * i.e. from the stage's egress, the only IP WeCom answers for an app with trusted IPs, and says which of the named
 * ids it leaves out. Nothing the caller did not name is returned: the range itself stays inside.
 *
 * @example await checkReach(deps, apiKey, 'ops', { touser: 'zhangsan' }) // { app: 'ops', outside: {...}, ... }
 */
export async function checkReach(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  app: string,
  query: Readonly<Record<string, string | undefined>>,
): Promise<ReachView> {
  const config = appFor(deps, apiKey, app);
  const wanted = parseReachQuery(query);
  let read: Awaited<ReturnType<IngestDeps['visibleRanges']['get']>>;
  try {
    read = await deps.visibleRanges.get(config);
  } catch (err) {
    deps.logger.warn('agent/get failed', { err, app });
    if (err instanceof WecomApiError && err.errcode === IP_NOT_TRUSTED) {
      throw new StateConflictError(
        'wecom_ip_not_trusted',
        `WeCom answered errcode 60020 to ${err.api}: ${errcodeHint(IP_NOT_TRUSTED, err.errmsg)}`,
      );
    }
    if (err instanceof WecomApiError && (err.errclass === 'permanent' || err.errclass === 'config')) {
      const hint = errcodeHint(err.errcode, err.errmsg);
      throw new StateConflictError(
        'wecom_reach_failed',
        // WeCom's errmsg carries its own "hint: [...], more info at ..." tail: the gateway's hint says more.
        `WeCom refused ${err.api}: errcode ${err.errcode}: ${hint ?? err.errmsg}`,
      );
    }
    // Busy, a token being refreshed elsewhere, no answer: the same request may succeed in a moment.
    if (err instanceof WecomError)
      throw new RetryLaterError("WeCom could not be asked for the app's visible range right now; retry");
    throw err;
  }
  return {
    app,
    ...rangeCoverage(read.range, wanted),
    checked_at: new Date(read.fetchedAtMs).toISOString(),
  };
}
