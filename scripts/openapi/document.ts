/**
 * The OpenAPI 3.1 document of the HTTP API (docs/openapi.json), generated from the valibot schemas the validator
 * runs (lib/messages), so a field, a limit or a msgtype cannot be added to one and not the other.
 *
 * JSON Schema cannot say everything the validator checks. The document is a faithful subset: every request the
 * gateway accepts validates against it, and what it cannot express is either an `x-` keyword (UTF-8 byte and
 * grapheme limits: `x-max-bytes`, `x-max-chars`, `x-min-chars`) or left to the gateway's 400 (cross-field rules of
 * news articles and template cards, `"a|b"` recipient counts).
 */
import { type JsonSchema, type OverrideActionContext, toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { MAX_BODY_BYTES } from '#functions/ingest/app.js';
import { API_KEY_SCOPES } from '#lib/config/index.js';
import type { AppState } from '#lib/ingest/apps.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '#lib/ingest/list-query.js';
import { MAX_REACH_IDS } from '#lib/ingest/reach.js';
import { LIMITS, MSG_TYPES, ROBOT_MSG_TYPE_NAMES } from '#lib/messages/index.js';
import { GatewayFieldsSchema } from '#lib/messages/schemas/gateway.js';
import { MessageContentSchema } from '#lib/messages/schemas/message.js';
import { PREVIEW_RECIPIENTS, STATUS } from '#lib/model/index.js';
import { ROUTES } from '#lib/resources/index.js';
import { HOOK_PATHS, HOOK_SCHEMAS } from './hooks.js';
import { operationPaths, operationSchemas } from './operations.js';
import { errorResponse, type Json, jsonBody, messageId, RETRY_AFTER, ref, response } from './parts.js';
import { messageStatusExtras, type OpenApiHelpers, receiptPaths, receiptSchemas } from './receipts.js';
import { robotParts } from './robots.js';
import { templateParts } from './templates.js';

/** A regex source with the `i` flag, which JSON Schema patterns lack: letters become `[hH]` classes. */
export function caseInsensitivePattern(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      out += c + (source[++i] ?? '');
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === ']') {
      inClass = false;
      out += c;
    } else if (/[a-z]/i.test(c)) {
      // A letter inside a class would need its other case added to the class (and ranges mapped): not needed yet.
      if (inClass) throw new Error(`/${source}/i: letters in a character class are not supported`);
      out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
    } else {
      out += c;
    }
  }
  return out;
}

/** The actions JSON Schema has no keyword for, mapped to `x-` keywords; anything unknown fails generation. */
function overrideAction({
  valibotAction: action,
  jsonSchema,
}: OverrideActionContext): JsonSchema | undefined {
  const a = action as v.PipeAction<unknown, unknown, v.BaseIssue<unknown>> & {
    requirement?: unknown;
    maxChars?: number;
    openApi?: Record<string, unknown>;
  };
  switch (a.type) {
    case 'max_bytes':
      return { ...jsonSchema, 'x-max-bytes': a.requirement } as JsonSchema;
    case 'max_graphemes':
      return { ...jsonSchema, 'x-max-chars': a.requirement } as JsonSchema;
    case 'min_graphemes':
      return { ...jsonSchema, 'x-min-chars': a.requirement } as JsonSchema;
    case 'regex': {
      const re = a.requirement as RegExp;
      if (re.flags === '') return undefined;
      if (re.flags !== 'i') throw new Error(`regex flags ${re.flags} have no JSON Schema form`);
      return { ...jsonSchema, pattern: caseInsensitivePattern(re.source) } as JsonSchema;
    }
    case 'check':
      if (a.maxChars !== undefined) return { ...jsonSchema, 'x-max-chars': a.maxChars } as JsonSchema;
      // A robot's checks carry their rule as keywords (lib/messages/schemas/robot.ts `documented`).
      if (a.openApi !== undefined) return { ...jsonSchema, ...a.openApi } as JsonSchema;
      // callback_url (lib/messages/schemas/gateway.ts): an absolute https URL.
      if ((a.requirement as (input: string) => boolean).name === 'isAbsoluteHttpsUrl') {
        return { ...jsonSchema, format: 'uri', pattern: '^[hH][tT][tT][pP][sS]://' } as JsonSchema;
      }
      // send_at (lib/messages/schemas/gateway.ts): RFC 3339 with an offset, which is what date-time means.
      if ((a.requirement as (input: string) => boolean).name === 'isOffsetTime') {
        return { ...jsonSchema, format: 'date-time' } as JsonSchema;
      }
      return undefined;
    default:
      return undefined;
  }
}

const convert = (schema: Parameters<typeof toJsonSchema>[0]): Json => {
  const { $schema: _, ...json } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'throw',
    // Only metadata's pipeline holds two schemas: a custom step that tells an object from an array, then the
    // record that says the rest. 'output' converts a pipeline from its last schema on; optional fields stay
    // optional (typeMode affects pipelines only).
    typeMode: 'output',
    // Cross-field rules (news article url/appid/pagepath, template card parts): left to the gateway's 400.
    ignoreActions: ['raw_check'],
    overrideAction,
  }) as Json;
  return json;
};

const R = LIMITS.recipients;
/** touser/toparty/totag: WeCom's `a|b|c` or a JSON array (lib/messages/recipients.ts). */
const recipients = (max: number, entry: Json, extra: Json[] = []): Json => ({
  oneOf: [
    { type: 'string', description: `WeCom syntax "a|b|c", at most ${max} entries` },
    { type: 'array', items: entry, maxItems: max },
    ...extra,
  ],
});
const numericId = { type: 'string', pattern: `^\\s*\\d{1,${R.maxNumericIdDigits}}\\s*$` };
const RECIPIENTS: Json = {
  type: 'object',
  properties: {
    touser: recipients(R.maxUsers, { type: 'string', minLength: 1, 'x-max-bytes': R.maxUserIdBytes }),
    toparty: recipients(R.maxParties, { oneOf: [numericId, { type: 'integer', minimum: 0 }] }, [
      { type: 'integer', minimum: 0 },
    ]),
    totag: recipients(R.maxTags, { oneOf: [numericId, { type: 'integer', minimum: 0 }] }, [
      { type: 'integer', minimum: 0 },
    ]),
  },
  anyOf: [{ required: ['touser'] }, { required: ['toparty'] }, { required: ['totag'] }],
};

const COMMON_ERRORS = {
  '401': errorResponse('No key, a malformed Authorization header, or an unknown key', {
    'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } },
  }),
  '403': errorResponse(
    'The key may not use this app, or lacks the scope the route needs (the message names it)',
  ),
  '429': {
    description:
      "API Gateway's stage throttle (deployed stacks only); the body is API Gateway's own " +
      '`{"message":"Too Many Requests"}`. Back off and retry.',
  },
  '503': errorResponse(
    'The queue, the table or WeCom could not be reached; nothing was accepted',
    RETRY_AFTER,
  ),
};
const POST_ERRORS = {
  '400': errorResponse(
    'Invalid JSON, an invalid message (each detail names its field) or an invalid request',
  ),
  '413': errorResponse(`Body larger than ${MAX_BODY_BYTES} bytes`),
  '415': errorResponse('Content-Type is not application/json (or application/*+json)'),
};
const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] });

const APP_STATES = ['active', 'paused', 'circuit_open', 'probing'] satisfies AppState[];

/** What receipts.ts builds its parts with. */
const helpers = (): OpenApiHelpers => ({
  convert,
  ref,
  response,
  errorResponse,
  messageId,
  commonErrors: COMMON_ERRORS,
  postErrors: POST_ERRORS,
});

/** WeCom's answer to a send, as the record keeps it. */
const RECEIPT: Json = {
  type: 'object',
  properties: Object.fromEntries(
    ['msgid', 'invaliduser', 'invalidparty', 'invalidtag', 'unlicenseduser'].map((k) => [
      k,
      { type: 'string' },
    ]),
  ),
  required: ['msgid'],
};

/** Long content split on request (`split`): the number of parts, each a send to every recipient. */
const SPLIT_PARTS: Json = {
  type: 'integer',
  minimum: 2,
  description: 'Long content split on request: the number of parts, each sent to every recipient in order',
};

/** Request examples of `POST /v1/messages`: now, at a time, and inside quiet hours for a key allowed to. */
const SEND_EXAMPLES = {
  now: {
    summary: 'Send now',
    value: { app: 'ops', touser: 'zhangsan', msgtype: 'text', text: { content: 'disk full on db-1' } },
  },
  scheduled: {
    summary: 'Send at 09:00 Shanghai time (answered 202 scheduled; DELETE /v1/messages/{id} cancels it)',
    value: {
      app: 'ops',
      toparty: '2',
      msgtype: 'markdown',
      markdown: { content: '**Stand-up** in 15 minutes' },
      send_at: '2026-12-07T09:00:00+08:00',
    },
  },
  throughQuietHours: {
    summary: "Send now even inside the app's quiet hours (the key needs the scope quiet-hours:bypass)",
    value: {
      app: 'ops',
      touser: 'oncall',
      msgtype: 'text',
      text: { content: 'db-1 is down' },
      quiet_hours: false,
    },
  },
};

/** The times a scheduled message is answered with (docs/scheduling.md). */
const SCHEDULE_TIMES = {
  send_at: {
    type: 'string',
    format: 'date-time',
    description: 'Scheduled: when it is due (its send_at, or the end of the quiet hours that hold it)',
  },
  release_at: {
    type: 'string',
    format: 'date-time',
    description: 'Scheduled: when it is released to be sent (send_at plus its share of the spread)',
  },
};

/** Response bodies: shapes of lib/ingest's views and lib/http's error envelope. */
const RESPONSES: Record<string, Json> = {
  Accepted: {
    type: 'object',
    properties: {
      id: messageId.schema,
      status: { enum: [STATUS.queued, STATUS.scheduled] },
      ...SCHEDULE_TIMES,
      parts: SPLIT_PARTS,
    },
    required: ['id', 'status'],
    additionalProperties: false,
  },
  BatchResults: {
    type: 'object',
    properties: {
      results: {
        type: 'array',
        items: {
          oneOf: [
            {
              type: 'object',
              properties: {
                index: { type: 'integer', minimum: 0 },
                id: messageId.schema,
                status: { enum: [STATUS.queued, STATUS.scheduled] },
                ...SCHEDULE_TIMES,
                parts: SPLIT_PARTS,
              },
              required: ['index', 'id', 'status'],
              additionalProperties: false,
            },
            {
              type: 'object',
              properties: { index: { type: 'integer', minimum: 0 }, error: ref('ErrorObject') },
              required: ['index', 'error'],
              additionalProperties: false,
            },
          ],
        },
      },
    },
    required: ['results'],
    additionalProperties: false,
  },
  MessageStatus: {
    type: 'object',
    description: 'An app’s message names its app; a group robot’s its robot instead',
    properties: {
      id: messageId.schema,
      app: { type: 'string' },
      robot: { type: 'string' },
      status: { enum: Object.values(STATUS) },
      priority: { enum: ['high', 'normal'] },
      attempts: { type: 'integer', minimum: 0 },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      sent_at: nullable({ type: 'string', format: 'date-time' }),
      send_at: nullable({
        type: 'string',
        format: 'date-time',
        description:
          'A scheduled message: when it is due (its send_at, or the end of the quiet hours that hold it)',
      }),
      release_at: nullable({
        type: 'string',
        format: 'date-time',
        description:
          'A scheduled message: when it is released to be sent (send_at plus its share of the spread)',
      }),
      scheduled_by: nullable({ enum: ['send_at', 'quiet_hours'] }),
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      wecom: nullable(RECEIPT),
      parts: {
        type: 'array',
        description:
          'Present when the message went out in several sends: recipients who waited for their quota slots, or the parts of split content',
        items: {
          type: 'object',
          properties: {
            touser: { type: 'array', items: { type: 'string' } },
            sent_at: { type: 'string', format: 'date-time' },
            wecom: RECEIPT,
            content_part: {
              type: 'integer',
              minimum: 1,
              description: 'Split content: the part this send carried',
            },
          },
          required: ['touser', 'sent_at', 'wecom'],
          additionalProperties: false,
        },
      },
      split: {
        type: 'object',
        description: 'Present when long content was split (`split`)',
        properties: { parts: SPLIT_PARTS },
        required: ['parts'],
        additionalProperties: false,
      },
      error: nullable({
        type: 'object',
        properties: {
          code: {
            type: 'string',
            description:
              'exceeds_quota, budget_exhausted, expired, retries_exhausted, app_not_configured, wecom_config_error, wecom_rejected, …',
          },
          message: { type: 'string' },
          wecom_errcode: { type: 'integer' },
        },
        required: ['code', 'message'],
      }),
      events: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            at: { type: 'string', format: 'date-time' },
            type: { type: 'string' },
            detail: { type: 'string' },
          },
          required: ['at', 'type'],
        },
      },
      ...messageStatusExtras(helpers()),
      body: {
        type: 'object',
        description:
          'The message as the gateway sends it to WeCom, without recipients and options: msgtype and that ' +
          'type\'s object, e.g. {"msgtype":"text","text":{"content":"…"}}',
        properties: { msgtype: { enum: [...MSG_TYPES] } },
        required: ['msgtype'],
      },
    },
    required: ['id', 'status', 'priority', 'attempts', 'created_at', 'updated_at', 'error', 'events'],
    oneOf: [{ required: ['app'] }, { required: ['robot'] }],
  },
  MessageSummary: {
    type: 'object',
    description:
      'A message in a list: a subset of its status (GET /v1/messages/{id}) and whom it is for, never its content',
    properties: {
      id: messageId.schema,
      app: {
        type: 'string',
        description: 'The app it goes through; a group robot’s message has robot instead',
      },
      robot: {
        type: 'string',
        description: 'The group robot it goes through (its touser, toparty, totag: empty)',
      },
      status: { enum: Object.values(STATUS) },
      priority: { enum: ['high', 'normal'] },
      msgtype: { enum: [...new Set([...MSG_TYPES, ...ROBOT_MSG_TYPE_NAMES])] },
      touser: { type: 'array', items: { type: 'string' }, maxItems: PREVIEW_RECIPIENTS },
      toparty: { type: 'array', items: { type: 'string' }, maxItems: PREVIEW_RECIPIENTS },
      totag: { type: 'array', items: { type: 'string' }, maxItems: PREVIEW_RECIPIENTS },
      recipients_omitted: {
        type: 'integer',
        minimum: 0,
        description: `Recipients beyond the first ${PREVIEW_RECIPIENTS} of each kind, not listed`,
      },
      attempts: { type: 'integer', minimum: 0 },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      sent_at: nullable({ type: 'string', format: 'date-time' }),
      send_at: {
        type: 'string',
        format: 'date-time',
        description:
          'A scheduled message: the time it was asked for (send_at), or the end of the quiet hours that held it',
      },
      release_at: {
        type: 'string',
        format: 'date-time',
        description: 'A scheduled message: when it leaves for WeCom (send_at plus its share of the spread)',
      },
    },
    required: [
      'id',
      'status',
      'priority',
      'msgtype',
      'touser',
      'toparty',
      'totag',
      'recipients_omitted',
      'attempts',
      'created_at',
      'updated_at',
      'sent_at',
    ],
    oneOf: [{ required: ['app'] }, { required: ['robot'] }],
    additionalProperties: false,
  },
  MessagePage: {
    type: 'object',
    properties: {
      messages: { type: 'array', items: ref('MessageSummary'), maxItems: MAX_LIST_LIMIT },
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as cursor, with the same filters, for the next page; null at the end of the list',
      },
    },
    required: ['messages', 'next_cursor'],
    additionalProperties: false,
  },
  Canceled: {
    type: 'object',
    properties: { id: messageId.schema, status: { const: STATUS.canceled } },
    required: ['id', 'status'],
    additionalProperties: false,
  },
  Recalled: {
    type: 'object',
    properties: { status: { const: STATUS.recalled } },
    required: ['status'],
    additionalProperties: false,
  },
  AppState: {
    type: 'object',
    description:
      'What the sender knows about an app right now (lib/ingest/apps.ts); never its secret or token',
    properties: {
      app: { type: 'string' },
      state: { enum: APP_STATES },
      pause: nullable({
        type: 'object',
        properties: {
          kind: { enum: ['rate_limited', 'config_error'] },
          errcode: nullable({ type: 'integer' }),
          reason: { type: 'string' },
          hint: nullable({ type: 'string' }),
          since: { type: 'string', format: 'date-time' },
          until: { type: 'string', format: 'date-time' },
          level: { type: 'integer', minimum: 0 },
          fails_messages_at: nullable({ type: 'string', format: 'date-time' }),
        },
        required: ['kind', 'errcode', 'reason', 'hint', 'since', 'until', 'level', 'fails_messages_at'],
      }),
      quota: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            window: { type: 'string' },
            limit: { type: 'integer', minimum: 0 },
            allowed: { type: 'integer', minimum: 0 },
            used: { type: 'integer', minimum: 0 },
            resets_at: { type: 'string' },
          },
          required: ['window', 'limit', 'allowed', 'used', 'resets_at'],
        },
      },
      token: {
        type: 'object',
        properties: {
          fetched_at: nullable({ type: 'string', format: 'date-time' }),
          age_seconds: nullable({ type: 'integer' }),
          expires_in_seconds: nullable({ type: 'integer' }),
          last_error: nullable({
            type: 'object',
            properties: {
              errcode: nullable({ type: 'integer' }),
              class: { type: 'string' },
              failures: { type: 'integer', minimum: 0 },
              retry_at: { type: 'string' },
            },
            required: ['errcode', 'class', 'failures', 'retry_at'],
          }),
        },
        required: ['fetched_at', 'age_seconds', 'expires_in_seconds', 'last_error'],
      },
    },
    required: ['app', 'state', 'pause', 'quota', 'token'],
  },
  AppList: {
    type: 'object',
    properties: {
      key: {
        type: 'object',
        description: 'The API key of the request: its name in the config and the scopes it holds',
        properties: {
          name: { type: 'string' },
          scopes: { type: 'array', items: { enum: [...API_KEY_SCOPES] } },
        },
        required: ['name', 'scopes'],
      },
      apps: {
        type: 'array',
        items: {
          type: 'object',
          properties: { app: { type: 'string' }, state: { enum: APP_STATES } },
          required: ['app', 'state'],
        },
      },
      queues: {
        type: 'array',
        description:
          "Only for keys with the admin scope (the lanes are shared by every app): each lane's approximate SQS " +
          'counts, waiting, in flight (being sent or waiting out a retry), delayed (deferred copies), and in its DLQ',
        items: {
          type: 'object',
          properties: {
            lane: { enum: ['high', 'normal'] },
            waiting: { type: 'integer', minimum: 0 },
            in_flight: { type: 'integer', minimum: 0 },
            delayed: { type: 'integer', minimum: 0 },
            dead: nullable({ type: 'integer', minimum: 0 }),
          },
          required: ['lane', 'waiting', 'in_flight', 'delayed', 'dead'],
        },
      },
    },
    required: ['key', 'apps'],
  },
  Reach: {
    type: 'object',
    description:
      "Only ids the query named: the app's visible range itself is not returned. Read with WeCom agent/get " +
      'from the gateway (a minute old at most).',
    properties: {
      app: { type: 'string' },
      outside: { ...ref('ReachIds'), description: 'Outside the visible range: WeCom sends them nothing' },
      unknown: {
        ...ref('ReachIds'),
        description:
          'Not listed in the range, which holds parties or tags that may hold them (agent/get does not expand ' +
          'them): check in the admin console',
      },
      checked_at: { type: 'string', format: 'date-time', description: 'When WeCom answered agent/get' },
    },
    required: ['app', 'outside', 'unknown', 'checked_at'],
  },
  ReachIds: {
    type: 'object',
    properties: {
      touser: { type: 'array', items: { type: 'string' } },
      toparty: { type: 'array', items: { type: 'string' } },
      totag: { type: 'array', items: { type: 'string' } },
    },
    required: ['touser', 'toparty', 'totag'],
  },
  Health: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] },
  ErrorObject: {
    type: 'object',
    properties: {
      code: { type: 'string' },
      message: { type: 'string' },
      details: { type: 'array', items: { type: 'object' } },
    },
    required: ['code', 'message', 'details'],
  },
  Error: {
    type: 'object',
    properties: { error: ref('ErrorObject') },
    required: ['error'],
    additionalProperties: false,
  },
};

/**
 * Builds the document. Deterministic (no dates, no random ids), so the committed docs/openapi.json can be
 * compared with a fresh build.
 */
/**
 * Each operation that needs an API key names its scope as `x-scope`, from the route table the gateway enforces
 * (lib/resources `ROUTES`, matched by operationId), so the document cannot claim another.
 */
function withScopes(doc: Json): Json {
  const scopes = new Map<string, string>(
    ROUTES.flatMap((r) => (typeof r.auth === 'object' && 'scope' in r.auth ? [[r.id, r.auth.scope]] : [])),
  );
  for (const item of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(item)) {
      const scope = scopes.get(String(op.operationId));
      if (scope) op['x-scope'] = scope;
    }
  }
  return doc;
}

export function buildOpenApiDocument(version: string): Json {
  return withScopes(buildDocument(version));
}

function buildDocument(version: string): Json {
  const gatewayFields = convert(GatewayFieldsSchema);
  const templates = templateParts({ gatewayFields, recipients: RECIPIENTS, commonErrors: COMMON_ERRORS });
  const appState = RESPONSES.AppState as { properties: { pause: Json; quota: Json } };
  const robots = robotParts({
    convert: convert as (schema: never) => Json,
    commonErrors: COMMON_ERRORS,
    appStates: APP_STATES,
    pause: appState.properties.pause,
    quota: appState.properties.quota,
  });
  const message: Json = {
    type: 'object',
    description:
      'The WeCom message/send body with the same field names, minus agentid, plus app, priority, ' +
      'callback_url and metadata. Unknown fields are rejected.',
    allOf: [gatewayFields, RECIPIENTS, convert(MessageContentSchema)],
    unevaluatedProperties: false,
  };
  const batch: Json = {
    type: 'object',
    properties: { messages: { type: 'array', items: ref('SendRequest'), minItems: 1, maxItems: 100 } },
    required: ['messages'],
    additionalProperties: false,
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'wecom-gateway',
      version,
      description:
        "Push gateway for WeCom (企业微信) application messages. Generated from the validator's schemas by " +
        '`npm run openapi`; docs/api.md explains the behaviour. x-max-bytes: UTF-8 bytes; x-max-chars / ' +
        'x-min-chars: user-perceived characters (graphemes).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: '`npm start` (local stack)' },
      {
        url: '{apiUrl}',
        description: 'A deployed stack: the ApiUrl output of `cdk deploy`',
        variables: { apiUrl: { default: 'https://example.execute-api.ap-east-1.amazonaws.com' } },
      },
    ],
    security: [{ bearerAuth: [] }],
    paths: {
      '/v1/messages': {
        get: {
          operationId: 'listMessages',
          summary:
            "List an app's (or a group robot's) messages, newest first, by status, recipient, type and time",
          description:
            'One page per call. A filtered page may hold fewer than limit messages (even none) while next_cursor ' +
            'is not null: follow next_cursor to the end. Scope messages:read.',
          parameters: [
            {
              name: 'app',
              in: 'query',
              schema: { type: 'string' },
              description:
                'The app to list. Name one app or one robot when the key may read more than one of them; default: ' +
                'the key’s only app (or its only robot)',
            },
            {
              name: 'robot',
              in: 'query',
              schema: { type: 'string' },
              description:
                'A group robot to list instead of an app (the key must list it in robots). Its messages go to ' +
                'its group chat: touser does not apply, and msgtype takes the robot’s types',
            },
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string' },
              description: `One or more statuses, comma-separated: ${Object.values(STATUS).join(', ')}`,
            },
            {
              name: 'touser',
              in: 'query',
              schema: { type: 'string', minLength: 1, 'x-max-bytes': R.maxUserIdBytes },
              description: 'One userid the message lists in touser (any of them), compared without case',
            },
            {
              name: 'msgtype',
              in: 'query',
              schema: { enum: [...new Set([...MSG_TYPES, ...ROBOT_MSG_TYPE_NAMES])] },
              description: `An app's msgtype, or with robot one of ${ROBOT_MSG_TYPE_NAMES.join(', ')}`,
            },
            {
              name: 'since',
              in: 'query',
              schema: { type: 'string', format: 'date-time' },
              description: 'Accepted at or after this RFC 3339 time',
            },
            {
              name: 'until',
              in: 'query',
              schema: { type: 'string', format: 'date-time' },
              description: 'Accepted before this RFC 3339 time; not before since',
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
            },
            {
              name: 'cursor',
              in: 'query',
              schema: { type: 'string' },
              description: 'next_cursor of the previous page, with the same filters',
            },
          ],
          responses: {
            '200': response('A page of messages', ref('MessagePage')),
            '400': errorResponse(
              'A bad parameter (each detail names it): status, touser, msgtype, since, until, limit, cursor, ' +
                'a missing app, both app and robot, an unknown parameter',
            ),
            ...COMMON_ERRORS,
          },
        },
        post: {
          operationId: 'sendMessage',
          summary: 'Send a message',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
              description:
                'Makes retries safe: the same key and message within idempotencyHours answer the first 202',
            },
          ],
          requestBody: { required: true, ...jsonBody(ref('SendRequest'), SEND_EXAMPLES) },
          responses: {
            '202': response(
              'Stored and queued, or scheduled for later (send_at, quiet hours)',
              ref('Accepted'),
            ),
            ...POST_ERRORS,
            '409': errorResponse('Idempotency-Key reused with a different message'),
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/messages/batch': {
        post: {
          operationId: 'sendBatch',
          summary: 'Send up to 100 messages, each validated on its own',
          requestBody: { required: true, ...jsonBody(ref('BatchRequest')) },
          responses: {
            '207': response('One result per item, in order', ref('BatchResults')),
            ...POST_ERRORS,
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/messages/{id}': {
        get: {
          operationId: 'getMessage',
          summary: 'Read the status of a message',
          parameters: [messageId],
          responses: {
            '200': response('The message status', ref('MessageStatus')),
            '404': errorResponse('No such message, or one of an app the key cannot read'),
            ...COMMON_ERRORS,
          },
        },
        delete: {
          operationId: 'cancelMessage',
          summary: 'Cancel a message not yet sent (scheduled, queued or deferred): it is never delivered',
          description:
            'Scope messages:recall. Canceling a canceled message answers 200 again. A message being sent, sent, ' +
            'or ended otherwise is a 409 whose message names its status; a sent one can be recalled instead. ' +
            'A message sent at once can be canceled only after its first minute (docs/scheduling.md).',
          parameters: [messageId],
          responses: {
            '200': response('Canceled: no copy of it will be sent', ref('Canceled')),
            '404': errorResponse('No such message, or one of an app the key cannot read'),
            '409': errorResponse(
              'not_cancelable: the message is sending, sent or ended (named in the message)',
            ),
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/messages/{id}/recall': {
        post: {
          operationId: 'recallMessage',
          summary: 'Recall a sent message (within 24 hours of sending)',
          parameters: [messageId],
          responses: {
            '200': response('Recalled (also for a message already recalled)', ref('Recalled')),
            '404': errorResponse('No such message, or one of an app the key cannot read'),
            '409': errorResponse(
              'not_recallable, recall_window_passed, wecom_recall_failed or app_not_configured',
            ),
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/apps': {
        get: {
          operationId: 'listApps',
          summary: "The key's apps with their state",
          responses: {
            '200': response('One entry per app the key may use', ref('AppList')),
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/apps/{app}': {
        get: {
          operationId: 'getApp',
          summary: "An app's pause or circuit state, quota use and token age",
          parameters: [{ name: 'app', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': response("The app's state", ref('AppState')),
            '404': errorResponse('No such app, or one the key may not use'),
            ...COMMON_ERRORS,
          },
        },
      },
      '/v1/apps/{app}/reach': {
        get: {
          operationId: 'checkReach',
          summary: "Which of the named recipients are outside the app's visible range (可见范围)",
          description:
            'Asks WeCom agent/get from the gateway, i.e. from the trusted IP of a deployed stage. At least one of ' +
            'touser, toparty, totag. Scope messages:read.',
          parameters: [
            { name: 'app', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'touser',
              in: 'query',
              schema: { type: 'string' },
              description: `Userids, WeCom syntax "a|b", at most ${MAX_REACH_IDS}`,
            },
            {
              name: 'toparty',
              in: 'query',
              schema: { type: 'string' },
              description: `Department ids, WeCom syntax "a|b", at most ${MAX_REACH_IDS}`,
            },
            {
              name: 'totag',
              in: 'query',
              schema: { type: 'string' },
              description: `Tag ids, WeCom syntax "a|b", at most ${MAX_REACH_IDS}`,
            },
          ],
          responses: {
            '200': response('The named ids outside the range, or not known to be inside', ref('Reach')),
            '400': errorResponse('No ids, too many, or a malformed one: each detail names its field'),
            '404': errorResponse('No such app, or one the key may not use'),
            '409': errorResponse(
              "wecom_ip_not_trusted (60020: the gateway's IP is not in the app's 企业可信IP) or wecom_reach_failed " +
                '(another WeCom refusal, with its errcode and the fix)',
            ),
            ...COMMON_ERRORS,
          },
        },
      },
      ...receiptPaths(helpers()),
      ...operationPaths(helpers()),
      ...templates.paths,
      ...robots.paths,
      '/v1/health': {
        get: {
          operationId: 'health',
          summary: 'Liveness',
          security: [],
          responses: { '200': response('The gateway answers', ref('Health')) },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': {} } } },
        },
      },
      ...HOOK_PATHS,
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A gateway API key (config apiKeys)' },
      },
      schemas: {
        MessageRequest: message,
        BatchRequest: batch,
        ...RESPONSES,
        ...HOOK_SCHEMAS,
        ...receiptSchemas(helpers()),
        ...operationSchemas(helpers()),
        ...templates.schemas,
        ...robots.schemas,
      },
    },
  };
}
