/**
 * Artillery processor for load/gateway.yml: builds realistic message bodies (text, markdown, textcard, template
 * cards; both priorities; one or two recipients), sets auth and Idempotency-Key headers, checks what the expect
 * plugin cannot (a replay answers with the first request's id; a rejected request names the expected error code),
 * and records every accepted message so `npm run load` can reconcile it afterwards (each accepted id reaches a
 * terminal status and reaches its recipients exactly once).
 *
 * Environment (read per call, so the same file runs against the local stack and a deployed URL):
 *   WGW_API_KEY     API key (required)
 *   WGW_APP         app name from the gateway config (default `ops`)
 *   WGW_TOUSER      `a|b|c`: the only recipients to use (a deployed stack sends to real WeCom users: name them)
 *   WGW_USERS       without WGW_TOUSER: how many synthetic members `lt0001…` to spread messages over (default 1000,
 *                   so WeCom's 30-per-member-per-minute limit does not bind and delivery latency is the gateway's)
 *   WGW_RECORD_DIR  where to append accepted ids (JSON lines, one file per worker); unset = not recorded
 *   WGW_RUN_ID      marks every message of a run (default: a random one)
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

const runId = process.env.WGW_RUN_ID || Math.random().toString(36).slice(2, 8);
// One worker per thread in artillery 2; pid + thread id keeps tokens and record files apart between workers.
const workerTag = `${process.pid.toString(36)}${threadId}`;
let sequence = 0;

/** A unique marker placed in every message's visible text: the reconciliation finds it in the simulator inbox. */
const nextToken = () => `lt-${runId}-${workerTag}-${++sequence}`;

const env = (name, fallback) => process.env[name] || fallback;

function recipients() {
  const fixed = env('WGW_TOUSER', '');
  const pool = fixed
    ? fixed.split('|').filter(Boolean)
    : Array.from(
        { length: Number(env('WGW_USERS', '1000')) },
        (_, i) => `lt${String(i + 1).padStart(4, '0')}`,
      );
  return pool;
}
let pool;
const pick = (items) => items[Math.floor(Math.random() * items.length)];

function chooseRecipients() {
  pool ??= recipients();
  const first = pick(pool);
  // About one message in seven goes to two members, as alerts to an on-call pair do.
  if (pool.length > 1 && Math.random() < 0.15) {
    let second = pick(pool);
    while (second === first) second = pick(pool);
    return [first, second];
  }
  return [first];
}

/** Weighted choice: `[[weight, value], …]`. */
function weighted(entries) {
  const total = entries.reduce((a, [w]) => a + w, 0);
  let r = Math.random() * total;
  for (const [w, value] of entries) {
    r -= w;
    if (r < 0) return value;
  }
  return entries[entries.length - 1][1];
}

const LINK = 'https://status.example.com/incidents/4711';

const CONTENT = {
  text: (token) => ({
    msgtype: 'text',
    text: {
      content: `CRITICAL disk usage 93% on db-primary-01 (/var/lib/postgresql), threshold 90% for 5m. ${token}`,
    },
  }),
  markdown: (token) => ({
    msgtype: 'markdown',
    markdown: {
      content: `**Deploy finished** <font color="info">api-gateway</font>\n>env: prod\n>build: 4711\n>run: ${token}`,
    },
  }),
  textcard: (token) => ({
    msgtype: 'textcard',
    textcard: {
      title: 'Backup completed',
      description: `<div class="gray">nightly backup</div><div class="normal">db-primary-01: 42 GB in 7 min</div><div class="highlight">${token}</div>`,
      url: LINK,
      btntxt: 'More',
    },
  }),
  text_notice: (token) => ({
    msgtype: 'template_card',
    template_card: {
      card_type: 'text_notice',
      source: { desc: 'monitoring', desc_color: 1 },
      main_title: { title: 'Latency SLO burn', desc: 'checkout-api p99 above 800 ms' },
      emphasis_content: { title: '2.4x', desc: 'burn rate' },
      sub_title_text: token,
      horizontal_content_list: [{ keyname: 'service', value: 'checkout-api' }],
      jump_list: [{ type: 1, title: 'Runbook', url: LINK }],
      card_action: { type: 1, url: LINK },
    },
  }),
  button_interaction: (token) => ({
    msgtype: 'template_card',
    template_card: {
      card_type: 'button_interaction',
      main_title: { title: 'Approve production deploy', desc: 'release 2026.11.30-1' },
      sub_title_text: token,
      card_action: { type: 1, url: LINK },
      // WeCom: task_id is unique per app (digits, letters, _-@; ≤ 128 bytes) — the token is.
      task_id: token.replace(/[^0-9A-Za-z_\-@]/g, '_'),
      button_list: [
        { text: 'Approve', style: 1, key: 'approve' },
        { text: 'Reject', style: 2, key: 'reject' },
      ],
    },
  }),
};

const MSGTYPE_MIX = [
  [45, 'text'],
  [25, 'markdown'],
  [15, 'textcard'],
  [10, 'text_notice'],
  [5, 'button_interaction'],
];

/** One valid message with a fresh token. */
function validMessage() {
  const token = nextToken();
  const to = chooseRecipients();
  const priority = weighted([
    [20, 'high'],
    [40, 'normal'],
    [40, undefined], // the default (normal), as most clients send it
  ]);
  const body = {
    app: env('WGW_APP', 'ops'),
    touser: to.join('|'),
    ...CONTENT[weighted(MSGTYPE_MIX)](token),
    ...(priority ? { priority } : {}),
    ...(Math.random() < 0.2 ? { metadata: { source: 'artillery', run: runId } } : {}),
  };
  return { token, to, priority: priority ?? 'normal', body };
}

/**
 * Deliberately invalid requests: each must be answered with exactly this status and error code, and change nothing
 * (the reconciliation would find an unexpected message in an inbox).
 */
const INVALID = [
  () => {
    const m = validMessage().body;
    return {
      body: { ...m, msgtype: 'text', text: { content: 'x'.repeat(2049) } },
      status: 400,
      code: 'invalid_message',
    };
  },
  () => ({ body: { ...validMessage().body, msgtype: 'fax' }, status: 400, code: 'invalid_message' }),
  () => {
    const { touser: _dropped, ...m } = validMessage().body;
    return { body: m, status: 400, code: 'invalid_message' };
  },
  () => ({
    body: { ...validMessage().body, callbackUrl: 'https://hooks.example.com/x' },
    status: 400,
    code: 'invalid_message',
  }),
  () => ({ raw: '{"app":"ops","msgtype":"text",', status: 400, code: 'invalid_json' }),
  () => ({ body: validMessage().body, auth: 'Bearer wgw_not_a_key', status: 401, code: 'unauthorized' }),
  () => ({ body: { ...validMessage().body, app: 'no-such-app' }, status: 403, code: 'forbidden' }),
  () => ({
    body: validMessage().body,
    contentType: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
  }),
];

let recordFile;
/** Appends one JSON line; synchronous, so a record is on disk before artillery moves on (and before it exits). */
function record(line) {
  const dir = process.env.WGW_RECORD_DIR;
  if (!dir) return;
  if (recordFile === undefined) {
    mkdirSync(dir, { recursive: true });
    recordFile = join(dir, `accepted-${workerTag}.jsonl`);
  }
  appendFileSync(recordFile, `${JSON.stringify(line)}\n`);
}

const auth = () => `Bearer ${env('WGW_API_KEY', '')}`;

function parse(body) {
  try {
    return typeof body === 'string' ? JSON.parse(body) : body;
  } catch {
    return undefined;
  }
}

// ── function steps ──────────────────────────────────────────────────────────────────────────────────────────────

export async function newMessage(context) {
  const m = validMessage();
  context.vars.message = m;
  context.vars.idempotencyKey = undefined;
}

export async function newKeyedMessage(context) {
  await newMessage(context);
  context.vars.idempotencyKey = `load-${runId}-${context.vars.message.token}`;
}

/** The same key with another body: WeCom would get a different message, so the gateway must refuse (409). */
export async function changeKeyedBody(context) {
  const m = context.vars.message;
  // A fresh token that is never recorded: if this body were ever delivered, reconciliation reports it unexpected.
  context.vars.conflicting = {
    app: m.body.app,
    touser: m.body.touser,
    msgtype: 'text',
    text: { content: `another body for the same Idempotency-Key ${nextToken()}` },
  };
}

export async function newBatch(context) {
  const size = 5 + Math.floor(Math.random() * 16); // 5–20 messages: a realistic digest or fan-out
  context.vars.batch = Array.from({ length: size }, validMessage);
}

export async function newInvalid(context) {
  context.vars.invalid = pick(INVALID)();
  context.vars.expectedStatus = context.vars.invalid.status;
  context.vars.expectedCode = context.vars.invalid.code;
}

// ── beforeRequest hooks ─────────────────────────────────────────────────────────────────────────────────────────

export async function sendMessage(req, context) {
  req.headers = { ...req.headers, authorization: auth() };
  if (context.vars.idempotencyKey) req.headers['idempotency-key'] = context.vars.idempotencyKey;
  req.json = context.vars.message.body;
  // Before the answer: a request whose answer never comes (client timeout) may still have been accepted.
  record({ sent: context.vars.message.token });
}

export async function sendConflicting(req, context) {
  req.headers = { ...req.headers, authorization: auth(), 'idempotency-key': context.vars.idempotencyKey };
  req.json = context.vars.conflicting;
}

export async function sendBatch(req, context) {
  req.headers = { ...req.headers, authorization: auth() };
  req.json = { messages: context.vars.batch.map((m) => m.body) };
  for (const m of context.vars.batch) record({ sent: m.token });
}

export async function sendInvalid(req, context) {
  const c = context.vars.invalid;
  req.headers = {
    ...req.headers,
    authorization: c.auth ?? auth(),
    'content-type': c.contentType ?? 'application/json',
  };
  req.body = c.raw ?? JSON.stringify(c.body);
  delete req.json;
}

export async function authorize(req) {
  req.headers = { ...req.headers, authorization: auth() };
}

// ── afterResponse hooks ─────────────────────────────────────────────────────────────────────────────────────────

/** Counts an answer that is not the expected one, by status and error code, and records the token as refused. */
function unexpectedAnswer(res, events, tokens) {
  const code = parse(res.body)?.error?.code ?? 'none';
  events.emit('counter', `wgw.unexpected_answer.${res.statusCode}.${code}`, 1);
  for (const token of tokens) record({ refused: token, status: res.statusCode });
}

export async function recordAccepted(_req, res, context, events) {
  const m = context.vars.message;
  if (res.statusCode !== 202) {
    unexpectedAnswer(res, events, [m.token]);
    return;
  }
  const id = parse(res.body)?.id;
  context.vars.firstId = id;
  events.emit('counter', 'wgw.accepted', 1);
  record({ id, token: m.token, to: m.to, priority: m.priority, at: Date.now(), via: 'single' });
}

export async function checkReplay(req, res, context, events) {
  const first = context.vars.firstId;
  if (first === undefined) {
    // The first answer never came (client timeout): the replay is how such a client learns its id — by design.
    events.emit('counter', 'wgw.replay.recovered_lost_answer', 1);
    await recordAccepted(req, res, context, events);
    return;
  }
  const id = parse(res.body)?.id;
  const same = res.statusCode === 202 && id === first;
  events.emit('counter', same ? 'wgw.replay.same_id' : 'wgw.replay.mismatch', 1);
  record({ replayOf: first, id, status: res.statusCode });
}

export async function checkConflict(_req, res, _context, events) {
  if (res.statusCode !== 409) unexpectedAnswer(res, events, []);
}

/** A status read of an accepted id must answer 200: the record is written before the 202. */
export async function checkStatus(_req, res, context, events) {
  if (res.statusCode !== 200 && context.vars.firstId !== undefined) unexpectedAnswer(res, events, []);
}

export async function recordBatch(_req, res, context, events) {
  if (res.statusCode !== 207) {
    unexpectedAnswer(
      res,
      events,
      context.vars.batch.map((m) => m.token),
    );
    return;
  }
  const results = parse(res.body)?.results ?? [];
  for (const r of results) {
    const m = context.vars.batch[r.index];
    if (!m) continue;
    if (r.id) {
      events.emit('counter', 'wgw.accepted', 1);
      record({ id: r.id, token: m.token, to: m.to, priority: m.priority, at: Date.now(), via: 'batch' });
    } else {
      events.emit('counter', `wgw.batch_item_error.${r.error?.code ?? 'unknown'}`, 1);
      record({ refused: m.token, status: 207 });
    }
  }
}

export async function checkRejected(_req, res, context, events) {
  const code = parse(res.body)?.error?.code;
  const ok = res.statusCode === context.vars.expectedStatus && code === context.vars.expectedCode;
  events.emit('counter', ok ? 'wgw.rejected_as_expected' : 'wgw.rejected_wrongly', 1);
}
