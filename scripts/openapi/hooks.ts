/**
 * The OpenAPI operations of the routes other systems call without an API key: SaaS webhooks
 * (`POST /v1/hooks/{hook}/{token}`) and ServerChan-style push (`GET|POST /v1/push/{sendkey}`). Their token is in
 * the URL (config `hooks[name].sha256`, `pushKeys[].sha256`), so they declare no security scheme. Behaviour in
 * docs/api.md (Webhooks, One-URL push); the answers are lib/ingest/hooks.ts `HookReceipt` and `PushReceipt`.
 */
import { MAX_BODY_BYTES } from '#functions/ingest/app.js';
import { HOOK_SOURCES } from '#lib/config/index.js';
import { STATUS } from '#lib/model/index.js';
import { errorResponse, type Json, messageId, RETRY_AFTER, ref, response } from './parts.js';

const UNAUTHORIZED = { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } };
const INBOUND_ERRORS = {
  '413': errorResponse(`Body larger than ${MAX_BODY_BYTES} bytes`),
  '429': {
    description:
      "API Gateway's throttle of this route (deployed stacks only: context hookRateLimit/hookBurstLimit); the " +
      'body is API Gateway\'s own `{"message":"Too Many Requests"}`.',
  },
  '503': errorResponse('The table or the queue could not be reached; nothing was queued', RETRY_AFTER),
};

const hookParameters = [
  {
    name: 'hook',
    in: 'path',
    required: true,
    description: 'The name of an entry of config `hooks`',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
  },
  {
    name: 'token',
    in: 'path',
    required: true,
    description: "The hook's token (config stores its SHA-256); it opens that hook only",
    schema: { type: 'string', minLength: 1 },
  },
  {
    name: 'Idempotency-Key',
    in: 'header',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
    description:
      'Generic hooks: makes retries safe. Vendors are deduplicated by their own delivery ids (X-GitHub-Delivery, ' +
      'X-Gitlab-Event-UUID, Sentry event and rule; Alertmanager and Grafana by group, status and alerts)',
  },
];

const sendkey = {
  name: 'sendkey',
  in: 'path',
  required: true,
  description:
    'A push key of config `pushKeys` (stored as SHA-256); a trailing `.send` is dropped, as ServerChan',
  schema: { type: 'string', minLength: 1 },
};

/** ServerChan's parameters; in the query string, a form body or a JSON object (the body wins). */
const PUSH_PARAMS: Record<string, Json> = {
  title: { type: 'string', description: 'Required (or its older name `text`): the message title' },
  text: { type: 'string', description: "ServerChan's older name for `title`" },
  desp: { type: 'string', description: 'Optional Markdown body' },
  short: { type: 'string', description: "Optional one-line summary (a textcard push key's description)" },
  ...Object.fromEntries(
    ['channel', 'openid', 'noip', 'tags'].map((name) => [
      name,
      { type: 'string', description: 'ServerChan parameter, accepted and ignored' },
    ]),
  ),
};

const PUSH_ERRORS = {
  '400': errorResponse('hook_payload_invalid: no title, or a body that is neither a form nor a JSON object'),
  '401': errorResponse('unauthorized: unknown sendkey', UNAUTHORIZED),
  ...INBOUND_ERRORS,
};

export const HOOK_PATHS: Json = {
  '/v1/hooks/{hook}/{token}': {
    post: {
      operationId: 'receiveHook',
      summary: "A SaaS system's webhook delivery, turned into messages by the hook's source",
      description: `Sources: ${HOOK_SOURCES.join(', ')}. A signature (hook \`secret\`) is checked over the exact bytes received before the body is parsed.`,
      security: [],
      parameters: hookParameters,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { description: "The vendor's own payload, as it sends it (Alertmanager, GitHub, …)" },
          },
        },
      },
      responses: {
        '202': response('Every message of the delivery is stored and queued', ref('HookQueued')),
        '200': response(
          'Nothing to send (a ping, an event not rendered, an ignore rule)',
          ref('HookIgnored'),
        ),
        '400': errorResponse(
          "hook_payload_invalid (not the vendor's payload; details name the fields), hook_template_empty or " +
            'invalid_message (the rendered message breaks a WeCom rule)',
        ),
        '401': errorResponse(
          'unauthorized (unknown hook or wrong token: the same answer for both), hook_signature_missing or ' +
            'hook_signature_invalid',
          UNAUTHORIZED,
        ),
        ...INBOUND_ERRORS,
      },
    },
  },
  '/v1/push/{sendkey}': {
    get: {
      operationId: 'pushQuery',
      summary: 'ServerChan-compatible push, parameters in the query string',
      security: [],
      parameters: [
        sendkey,
        ...Object.entries(PUSH_PARAMS).map(([name, schema]) => ({ name, in: 'query', schema })),
      ],
      responses: { '200': response('Stored and queued', ref('PushReceipt')), ...PUSH_ERRORS },
    },
    post: {
      operationId: 'pushBody',
      summary: 'ServerChan-compatible push, parameters in a form or JSON body (the query string also counts)',
      security: [],
      parameters: [sendkey],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: ref('PushRequest') },
          'application/json': { schema: ref('PushRequest') },
        },
      },
      responses: { '200': response('Stored and queued', ref('PushReceipt')), ...PUSH_ERRORS },
    },
  },
};

const accepted = ref('Accepted');

/** Response and request bodies of the hook and push routes. */
export const HOOK_SCHEMAS: Record<string, Json> = {
  HookQueued: {
    type: 'object',
    properties: {
      status: { const: 'queued' },
      event: { type: 'string', description: 'The event as the vendor names it (firing, push, …)' },
      messages: { type: 'array', items: accepted },
    },
    required: ['status', 'event', 'messages'],
    additionalProperties: false,
  },
  HookIgnored: {
    type: 'object',
    properties: {
      status: { const: 'ignored' },
      event: { type: 'string' },
      messages: { type: 'array', maxItems: 0 },
      reason: { type: 'string' },
    },
    required: ['status', 'event', 'messages', 'reason'],
    additionalProperties: false,
  },
  PushReceipt: {
    type: 'object',
    description: "The gateway's answer (id, status) beside ServerChan's (code, message, data)",
    properties: {
      id: messageId.schema,
      status: { const: STATUS.queued },
      code: { const: 0 },
      message: { const: '' },
      data: {
        type: 'object',
        properties: { pushid: messageId.schema, errno: { const: 0 }, error: { const: 'SUCCESS' } },
        required: ['pushid', 'errno', 'error'],
        additionalProperties: false,
      },
    },
    required: ['id', 'status', 'code', 'message', 'data'],
    additionalProperties: false,
  },
  PushRequest: {
    type: 'object',
    properties: PUSH_PARAMS,
    anyOf: [{ required: ['title'] }, { required: ['text'] }],
  },
};
