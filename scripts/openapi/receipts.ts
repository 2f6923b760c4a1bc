/**
 * The OpenAPI parts of WeCom's callbacks and what comes of them (issue 11): the card update, the events feed and
 * WeCom's own callback endpoint, and the views of received events and webhook attempts. Built with the helpers of
 * document.ts, which passes them in (so this file does not import it back).
 */
import { DEFAULT_MAX_BODY_BYTES } from '#lib/callback/verifier.js';
import { CardUpdateSchema } from '#lib/messages/card.js';
import { WEBHOOK_STATUS } from '#lib/model/index.js';

type Json = Record<string, unknown>;

export interface OpenApiHelpers {
  convert: (schema: typeof CardUpdateSchema) => Json;
  ref: (name: string) => Json;
  response: (description: string, schema: Json) => Json;
  errorResponse: (description: string) => Json;
  messageId: Json;
  commonErrors: Json;
  postErrors: Json;
}

const dateTime = { type: 'string', format: 'date-time' };
const WEBHOOK_OUTCOMES = ['delivered', 'retry', 'gone', 'refused', 'dead'];

/** Response bodies and the card update request (its valibot schema, converted like the message's). */
export function receiptSchemas(h: OpenApiHelpers): Record<string, Json> {
  return {
    CardUpdate: {
      ...h.convert(CardUpdateSchema),
      description: 'Exactly one of button or template_card; userids/partyids/tagids narrow whom it is for.',
      oneOf: [{ required: ['button'] }, { required: ['template_card'] }],
    },
    CardUpdated: {
      type: 'object',
      properties: { id: h.messageId.schema, status: { const: 'updated' } },
      required: ['id', 'status'],
      additionalProperties: false,
    },
    WecomEvent: {
      type: 'object',
      description: 'A callback WeCom posted, as received (the card’s response_code is never shown).',
      properties: {
        id: { type: 'string', description: 'msg:<MsgId> or evt:<hash>: the same callback retried is one id' },
        app: { type: 'string' },
        received_at: dateTime,
        message_id: { oneOf: [h.messageId.schema, { type: 'null' }] },
        event: {
          type: 'object',
          properties: {
            kind: {
              type: 'string',
              description:
                'text, image, voice, video, location, link, enter_agent, menu_click, menu_view, ' +
                'template_card_event, template_card_menu_event, change_contact, unknown',
            },
          },
          required: ['kind'],
        },
      },
      required: ['id', 'app', 'received_at', 'message_id', 'event'],
      additionalProperties: false,
    },
    EventPage: {
      type: 'object',
      properties: {
        events: { type: 'array', items: h.ref('WecomEvent') },
        next_cursor: { type: ['string', 'null'] },
      },
      required: ['events', 'next_cursor'],
      additionalProperties: false,
    },
    WebhookAttempt: {
      type: 'object',
      properties: {
        at: dateTime,
        webhook_id: { type: 'string' },
        type: { type: 'string' },
        attempt: { type: 'integer', minimum: 1 },
        target: { type: 'string', description: 'The URL without its query string' },
        outcome: { enum: WEBHOOK_OUTCOMES },
        status_code: { type: ['integer', 'null'] },
        latency_ms: { type: 'number', minimum: 0 },
        reason: { type: 'string' },
        excerpt: { type: 'string', maxLength: 256 },
        retry_in_seconds: { type: 'number', minimum: 0 },
      },
      required: ['at', 'webhook_id', 'type', 'attempt', 'target', 'outcome', 'status_code', 'latency_ms'],
      additionalProperties: false,
    },
  };
}

/** The fields GET /v1/messages/{id} adds for webhooks and WeCom events. */
export const messageStatusExtras = (h: OpenApiHelpers): Json => ({
  webhook_status: { enum: [...Object.values(WEBHOOK_STATUS), null] },
  wecom_events: { type: 'array', items: h.ref('WecomEvent'), maxItems: 50 },
  webhook_attempts: { type: 'array', items: h.ref('WebhookAttempt'), maxItems: 50 },
});

const callbackParams = (withEchostr: boolean): Json[] => [
  { name: 'app', in: 'path', required: true, schema: { type: 'string' } },
  ...['msg_signature', 'timestamp', 'nonce', ...(withEchostr ? ['echostr'] : [])].map((name) => ({
    name,
    in: 'query',
    required: true,
    schema: { type: 'string' },
  })),
];
const CALLBACK_ERRORS = (h: OpenApiHelpers) => ({
  '401': h.errorResponse('Bad signature, stale timestamp, another corp or a ciphertext that is not WeCom’s'),
  '404': h.errorResponse('No such app, or an app without callback settings'),
});

/** The operations. */
export function receiptPaths(h: OpenApiHelpers): Json {
  const id = [h.messageId];
  return {
    '/v1/messages/{id}/card': {
      post: {
        operationId: 'updateCard',
        summary: 'Update a sent template card (a pressed button’s text, or a new card) through WeCom',
        parameters: id,
        requestBody: { required: true, content: { 'application/json': { schema: h.ref('CardUpdate') } } },
        responses: {
          '200': h.response('WeCom updated the card', h.ref('CardUpdated')),
          ...h.postErrors,
          '404': h.errorResponse('No such message, or one of an app the key cannot read'),
          '409': h.errorResponse(
            'not_updatable, no_response_code, response_code_invalid or wecom_card_update_failed',
          ),
          ...h.commonErrors,
        },
      },
    },
    '/v1/events': {
      get: {
        operationId: 'listEvents',
        summary: 'Page through the WeCom events an app received, oldest first',
        parameters: [
          { name: 'app', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'since', in: 'query', schema: dateTime, description: 'Default: 24 hours ago' },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
          { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'next_cursor of a page' },
        ],
        responses: {
          '200': h.response('A page of events', h.ref('EventPage')),
          '400': h.errorResponse('A bad app, since, limit or cursor'),
          ...h.commonErrors,
        },
      },
    },
    '/v1/wecom/callback/{app}': {
      get: {
        operationId: 'verifyCallbackUrl',
        summary: 'WeCom’s URL verification (no key: WeCom signs it)',
        security: [],
        parameters: callbackParams(true),
        responses: {
          '200': {
            description: 'The decrypted echostr',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...CALLBACK_ERRORS(h),
        },
      },
      post: {
        operationId: 'receiveCallback',
        summary: 'A WeCom callback (no key: WeCom signs it), stored once',
        security: [],
        parameters: callbackParams(false),
        requestBody: {
          required: true,
          content: { 'text/xml': { schema: { type: 'string', 'x-max-bytes': DEFAULT_MAX_BODY_BYTES } } },
        },
        responses: {
          '200': { description: 'Stored (or stored before): an empty body, as WeCom wants' },
          '400': h.errorResponse('The decrypted XML is malformed'),
          ...CALLBACK_ERRORS(h),
          '413': h.errorResponse(`Body larger than ${DEFAULT_MAX_BODY_BYTES} bytes`),
          '503': h.errorResponse('Storage could not be reached: WeCom retries'),
        },
      },
    },
  };
}
