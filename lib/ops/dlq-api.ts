import type { ApiKeyConfig } from '#lib/config/index.js';
import { authorizeApp, mayUse } from '#lib/ingest/access.js';
import {
  InvalidRequestError,
  MessageNotFoundError,
  RetryLaterError,
  StateConflictError,
} from '#lib/ingest/errors.js';
import { MESSAGE_ID } from '#lib/ingest/ids.js';
import type { IngestDeps } from '#lib/ingest/types.js';
import { channelOf, type ValidationIssue } from '#lib/messages/index.js';
import type { MessageStatus } from '#lib/model/index.js';
import { LANES, type LaneName } from '#lib/resources/index.js';
import { isPlainObject } from '#lib/util/index.js';
import {
  type DeadLetterState,
  type DeadLetterView,
  type DlqDeps,
  listDeadLetters,
  type RedriveOutcome,
  type RedriveResult,
  redriveDeadLetters,
} from './dlq.js';

/**
 * The lanes' dead-letter queues over HTTP (`GET /v1/dlq`, `GET /v1/dlq/{id}`, `POST /v1/dlq/{id}/redrive`, scope
 * `admin`): the same lib/ops code as `wecom-gateway dlq list|redrive`, narrowed to the key's apps. A DLQ is an SQS
 * queue, read by receiving: every call reads up to `limit` (or {@link DLQ_SEARCH_MAX}) messages of each lane, hides
 * them while it looks, and shows them again when it ends. Messages of other apps are read but neither changed nor
 * shown. A message whose body cannot be read names no app, so no key is shown it: it could be any team's, and only
 * the operator's CLI (with the stack's own AWS access) lists it.
 */

export const DEFAULT_DLQ_LIMIT = 50;
export const MAX_DLQ_LIMIT = 100;
/** How many messages of each lane `GET /v1/dlq/{id}` and a redrive read to find one id. */
export const DLQ_SEARCH_MAX = 100;

/** One dead letter as the HTTP API shows it. */
export interface DeadLetterHttpView {
  id: string;
  /** The message's app; a group robot's message names its `robot` instead. */
  app?: string;
  robot?: string;
  lane: LaneName;
  state: DeadLetterState;
  /** The record's status after this read; null when there is no record. */
  status: MessageStatus | null;
  attempts: number | null;
  last_error: string | null;
  age_seconds: number | null;
  /** Receives of this copy so far (lane and DLQ). */
  receives: number | null;
  note: string | null;
  /** True when this read moved the record to `dead`. */
  reconciled: boolean;
  /** Whether `POST /v1/dlq/{id}/redrive` (without force) would send it again. */
  redrivable: boolean;
  not_redrivable_reason?: string;
}

export interface RedriveHttpResult {
  id: string;
  lane: LaneName;
  outcome: Exclude<RedriveOutcome, 'refused' | 'failed'>;
  detail: string;
  status: MessageStatus | null;
}

const toView = (v: DeadLetterView & { id: string }): DeadLetterHttpView => ({
  id: v.id,
  ...(v.robot !== undefined ? { robot: v.robot } : { app: v.app }),
  lane: v.lane,
  state: v.state,
  status: v.status ?? null,
  attempts: v.attempts ?? null,
  last_error: v.lastError ?? null,
  age_seconds: v.ageSeconds ?? null,
  receives: v.receives ?? null,
  note: v.note ?? null,
  reconciled: v.reconciled,
  redrivable: v.redrivable,
  ...(v.notRedrivableReason !== undefined ? { not_redrivable_reason: v.notRedrivableReason } : {}),
});

/** Only views of messages with a readable body have both; the filter by app already left out the others. */
const named = (v: DeadLetterView): v is DeadLetterView & { id: string } =>
  v.id !== undefined && (v.app !== undefined || v.robot !== undefined);

function dlqDeps(deps: IngestDeps): DlqDeps {
  if (!deps.deadLetters) {
    // Every deployed ingest function gets the DLQ URLs (infra); only a hand-built environment lacks them.
    throw new RetryLaterError(
      'the dead-letter queues are not configured for this gateway (DLQ_URL_HIGH/_NORMAL)',
    );
  }
  return {
    deadLetters: deps.deadLetters,
    lanes: deps.queue,
    messages: deps.messages,
    ...(deps.now ? { now: deps.now } : {}),
  };
}

const QUERY_PARAMETERS = ['app', 'lane', 'limit'] as const;

/** `GET /v1/dlq`'s query, or a 400 naming every bad parameter; an app the key may not use is a 403. */
export function parseDlqQuery(
  apiKey: ApiKeyConfig,
  query: Readonly<Record<string, string | undefined>>,
): { apps: string[]; robots: string[]; lanes: readonly LaneName[]; limit: number } {
  const issues: ValidationIssue[] = [];
  for (const name of Object.keys(query)) {
    if (!(QUERY_PARAMETERS as readonly string[]).includes(name))
      issues.push({ field: name, message: `unknown parameter; use ${QUERY_PARAMETERS.join(', ')}` });
  }
  const given = (name: (typeof QUERY_PARAMETERS)[number]) => query[name]?.trim() || undefined;
  const lane = given('lane');
  if (lane !== undefined && !(LANES as readonly string[]).includes(lane))
    issues.push({ field: 'lane', message: `must be one of ${LANES.join(', ')}` });
  const limitText = given('limit');
  const limit = limitText === undefined ? DEFAULT_DLQ_LIMIT : Number(limitText);
  if (!/^\d{1,4}$/.test(limitText ?? '1') || limit < 1 || limit > MAX_DLQ_LIMIT)
    issues.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_DLQ_LIMIT}` });
  if (issues.length > 0) throw new InvalidRequestError('invalid_request', 'invalid query parameters', issues);
  const app = given('app');
  if (app !== undefined) authorizeApp(apiKey, app);
  return {
    apps: app === undefined ? [...apiKey.apps] : [app],
    // A robot's messages show with the key's other messages; `app=` narrows to that app's alone.
    robots: app === undefined ? [...(apiKey.robots ?? [])] : [],
    lanes: lane === undefined ? LANES : [lane as LaneName],
    limit,
  };
}

/**
 * GET /v1/dlq?app=&lane=&limit=: the dead letters of the key's apps, as `wecom-gateway dlq list` shows them (and,
 * like it, making each record whose current copy died say `dead`). `limit` bounds the messages read per lane; a
 * DLQ holding other apps' messages may answer fewer.
 *
 * @example await listDlq(deps, apiKey, { lane: 'normal' }) // { dead_letters: [{ id, state: 'dead', … }] }
 */
export async function listDlq(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  query: Readonly<Record<string, string | undefined>>,
): Promise<{ dead_letters: DeadLetterHttpView[] }> {
  const { apps, robots, lanes, limit } = parseDlqQuery(apiKey, query);
  const ops = dlqDeps(deps);
  const views = await Promise.all(
    lanes.map((lane) => listDeadLetters(ops, { lane, max: limit, apps, robots })),
  );
  return { dead_letters: views.flat().filter(named).map(toView) };
}

/** A message id the route was given, or a 404 like an id of another app. */
function checkId(id: string): void {
  if (!MESSAGE_ID.test(id)) throw new MessageNotFoundError(`no dead letter ${id.slice(0, 64)}`);
}

const notInDlq = (id: string) =>
  new MessageNotFoundError(
    `no dead letter ${id} (not in a dead-letter queue, or a message the key cannot read)`,
  );

/**
 * GET /v1/dlq/{id}: one dead letter of the key's apps; 404 when no lane's DLQ holds it (or it is another app's).
 *
 * @example await getDeadLetter(deps, apiKey, 'msg_01JD…') // { id, state: 'dead', redrivable: true, … }
 */
export async function getDeadLetter(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<DeadLetterHttpView> {
  checkId(id);
  const ops = dlqDeps(deps);
  const filter = { ids: [id], apps: apiKey.apps, robots: apiKey.robots ?? [] };
  const views = await Promise.all(
    LANES.map((lane) => listDeadLetters(ops, { lane, max: DLQ_SEARCH_MAX, ...filter })),
  );
  const found = views.flat().find(named);
  if (!found) throw notInDlq(id);
  return toView(found);
}

/** The optional body of a redrive: `{"force": true}` as `wecom-gateway dlq redrive --force`. */
function parseRedriveBody(body: unknown): { force: boolean } {
  if (body === undefined || body === null) return { force: false };
  if (!isPlainObject(body))
    throw new InvalidRequestError('invalid_request', 'the body must be a JSON object', [
      { field: '(body)', message: 'expected {"force": true|false} or no body' },
    ]);
  const issues: ValidationIssue[] = Object.keys(body)
    .filter((k) => k !== 'force')
    .map((field) => ({ field, message: 'unknown field; only force' }));
  if (body.force !== undefined && typeof body.force !== 'boolean')
    issues.push({ field: 'force', message: 'must be true or false' });
  if (issues.length > 0) throw new InvalidRequestError('invalid_request', 'invalid redrive request', issues);
  return { force: body.force === true };
}

/**
 * POST /v1/dlq/{id}/redrive: `wecom-gateway dlq redrive --ids <id>` for one message of the key's apps, with the same
 * duplicate-interval safeguard. A refused redrive is a 409 `not_redrivable` (nothing was queued; `{"force": true}`
 * sends it anyway, and it may arrive twice); a redrive that failed half-way is a 503 (run it again).
 *
 * @example await redriveDeadLetter(deps, apiKey, 'msg_01JD…', undefined) // { outcome: 'redriven', status: 'queued', … }
 */
export async function redriveDeadLetter(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
  body: unknown,
): Promise<RedriveHttpResult> {
  checkId(id);
  const { force } = parseRedriveBody(body);
  const ops = dlqDeps(deps);
  const filter = { ids: [id], apps: apiKey.apps, robots: apiKey.robots ?? [], force };
  // One lane after the other, its priority's lane first (where its copies travel): the search stops where it is.
  const record = await deps.messages.get(id);
  const first = record && mayUse(apiKey, channelOf(record)) ? record.priority : undefined;
  let result: RedriveResult | undefined;
  for (const lane of [...LANES].sort((a, b) => Number(b === first) - Number(a === first))) {
    [result] = await redriveDeadLetters(ops, { lane, max: DLQ_SEARCH_MAX, ...filter });
    if (result) break;
  }
  if (!result || !named(result)) throw notInDlq(id);
  if (result.outcome === 'refused') throw new StateConflictError('not_redrivable', result.detail);
  if (result.outcome === 'failed') throw new RetryLaterError(result.detail);
  return {
    id: result.id,
    lane: result.lane,
    outcome: result.outcome,
    detail: result.detail,
    status: result.status ?? null,
  };
}
