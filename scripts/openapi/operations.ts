/**
 * The OpenAPI parts of the operator routes: the lanes' dead-letter queues (scope `admin`) and a message's webhook
 * deliveries. Built with the helpers of document.ts, which passes them in (so this file does not import it back).
 */
import { DEFAULT_DLQ_LIMIT, MAX_DLQ_LIMIT } from '#lib/ingest/dlq.js';
import { MAX_WEBHOOK_ATTEMPTS } from '#lib/ingest/webhooks.js';
import { STATUS } from '#lib/model/index.js';
import { LANES } from '#lib/resources/index.js';
import type { OpenApiHelpers } from './receipts.js';

type Json = Record<string, unknown>;

const dateTime = { type: 'string', format: 'date-time' };
const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] });
const DEAD_LETTER_STATES = ['dead', 'handled', 'superseded', 'redrive_interrupted', 'unknown'];
const WEBHOOK_OUTCOMES = ['delivered', 'retry', 'gone', 'refused', 'dead'];

export function operationPaths(h: OpenApiHelpers): Record<string, Json> {
  const adminOnly = 'Scope admin. ';
  return {
    '/v1/messages/{id}/webhooks': {
      get: {
        operationId: 'listWebhookDeliveries',
        summary: 'The webhooks sent for a message, with every attempt',
        description:
          'One entry per webhook (webhook-id), newest first; its attempts oldest first, with the receiver’s ' +
          'status code, the latency and why an attempt did not count. Scope messages:read.',
        parameters: [h.messageId],
        responses: {
          '200': h.response('The message’s webhook deliveries', h.ref('WebhookDeliveries')),
          '404': h.errorResponse('No such message, or one of an app the key cannot read'),
          ...h.commonErrors,
        },
      },
    },
    '/v1/dlq': {
      get: {
        operationId: 'listDeadLetters',
        summary: 'The dead letters of the key’s apps in the lanes’ dead-letter queues',
        description:
          `${adminOnly}The same pass as \`wecom-gateway dlq list\`: a message whose current copy died gets ` +
          'the status dead; nothing is removed. limit bounds the messages read per lane, so a DLQ that also ' +
          'holds other apps’ messages may answer fewer. Messages being read by another call at the same moment ' +
          'are hidden for up to a minute.',
        parameters: [
          {
            name: 'app',
            in: 'query',
            schema: { type: 'string' },
            description: 'Only this app (default: all the key’s apps)',
          },
          {
            name: 'lane',
            in: 'query',
            schema: { enum: [...LANES] },
            description: 'Only this lane (default: both)',
          },
          {
            name: 'limit',
            in: 'query',
            schema: { type: 'integer', minimum: 1, maximum: MAX_DLQ_LIMIT, default: DEFAULT_DLQ_LIMIT },
          },
        ],
        responses: {
          '200': h.response('The dead letters found', h.ref('DeadLetterList')),
          '400': h.errorResponse('A bad parameter (each detail names it): lane, limit, an unknown parameter'),
          ...h.commonErrors,
        },
      },
    },
    '/v1/dlq/{id}': {
      get: {
        operationId: 'getDeadLetter',
        summary: 'One dead letter, and whether a redrive would send it',
        description: `${adminOnly}Reads the lanes’ DLQs for this message id, as GET /v1/dlq does.`,
        parameters: [h.messageId],
        responses: {
          '200': h.response('The dead letter', h.ref('DeadLetter')),
          '404': h.errorResponse('Not in a dead-letter queue, or a message of an app the key cannot read'),
          ...h.commonErrors,
        },
      },
    },
    '/v1/dlq/{id}/redrive': {
      post: {
        operationId: 'redriveDeadLetter',
        summary: 'Send a dead letter again, with WeCom’s duplicate check',
        description:
          `${adminOnly}\`wecom-gateway dlq redrive --ids <id>\`: a fresh copy goes back to its lane as the ` +
          'sender’s own retries do; a message that ended meanwhile only loses its leftover DLQ copy ' +
          '(already_handled). A message whose possible delivery lies further back than its duplicate-check ' +
          'interval is refused (409 not_redrivable) unless force; forced, it may arrive twice. The body is optional.',
        parameters: [h.messageId],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: h.ref('RedriveRequest') } },
        },
        responses: {
          '200': h.response('What the redrive did', h.ref('RedriveResult')),
          '400': h.errorResponse('Invalid JSON, or a body other than {"force": true|false}'),
          '404': h.errorResponse('Not in a dead-letter queue, or a message of an app the key cannot read'),
          '409': h.errorResponse(
            'not_redrivable: WeCom’s duplicate check no longer covers an earlier attempt; nothing was queued',
          ),
          '415': h.errorResponse('A body whose Content-Type is not application/json'),
          ...h.commonErrors,
        },
      },
    },
  };
}

export function operationSchemas(h: OpenApiHelpers): Record<string, Json> {
  return {
    DeadLetter: {
      type: 'object',
      description:
        'A message in a lane’s dead-letter queue (lib/ops/dlq.ts), as `wecom-gateway dlq list` shows it',
      properties: {
        id: h.messageId.schema,
        app: { type: 'string' },
        lane: { enum: [...LANES] },
        state: {
          enum: DEAD_LETTER_STATES,
          description:
            'dead: nothing will send it; handled: it ended otherwise (a leftover copy); superseded: a newer copy ' +
            'owns it; redrive_interrupted: a redrive finishes it; unknown: no record',
        },
        status: nullable({ enum: Object.values(STATUS) }),
        attempts: nullable({ type: 'integer', minimum: 0 }),
        last_error: nullable({ type: 'string' }),
        age_seconds: nullable({ type: 'integer', minimum: 0 }),
        receives: nullable({
          type: 'integer',
          minimum: 0,
          description: 'Receives of this copy (lane and DLQ)',
        }),
        note: nullable({ type: 'string' }),
        reconciled: { type: 'boolean', description: 'True when this read set its status to dead' },
        redrivable: { type: 'boolean', description: 'Whether a redrive (without force) would send it again' },
        not_redrivable_reason: { type: 'string', description: 'Why not, when redrivable is false' },
      },
      required: [
        'id',
        'app',
        'lane',
        'state',
        'status',
        'attempts',
        'last_error',
        'age_seconds',
        'receives',
        'note',
        'reconciled',
        'redrivable',
      ],
    },
    DeadLetterList: {
      type: 'object',
      properties: { dead_letters: { type: 'array', items: h.ref('DeadLetter') } },
      required: ['dead_letters'],
    },
    RedriveRequest: {
      type: 'object',
      properties: {
        force: {
          type: 'boolean',
          default: false,
          description: 'Also send a message past its duplicate-check interval (it may arrive twice)',
        },
      },
      additionalProperties: false,
    },
    RedriveResult: {
      type: 'object',
      properties: {
        id: h.messageId.schema,
        lane: { enum: [...LANES] },
        outcome: {
          enum: ['redriven', 'already_handled', 'skipped'],
          description:
            'redriven: queued again; already_handled: it ended meanwhile, its leftover DLQ copy is gone; skipped: ' +
            'no record, or its record changed meanwhile (left in the DLQ)',
        },
        detail: { type: 'string' },
        status: nullable({ enum: Object.values(STATUS) }),
      },
      required: ['id', 'lane', 'outcome', 'detail', 'status'],
    },
    WebhookDeliveries: {
      type: 'object',
      properties: {
        deliveries: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string', description: 'The webhook-id header: the same on every attempt' },
              event: { type: 'string', description: 'message.sent, message.failed, …, wecom.event' },
              target: {
                type: 'string',
                description: 'Scheme, host, port and path; never the query or fragment',
              },
              status: { enum: ['delivered', 'retrying', 'gone', 'refused', 'dead'] },
              attempts: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    at: dateTime,
                    attempt: { type: 'integer', minimum: 1 },
                    outcome: { enum: WEBHOOK_OUTCOMES },
                    status_code: { type: 'integer' },
                    latency_ms: { type: 'number', minimum: 0 },
                    error: { type: 'string' },
                  },
                  required: ['at', 'attempt', 'outcome'],
                },
              },
              next_attempt_at: {
                ...dateTime,
                description: 'About when the next attempt is due, while retrying',
              },
            },
            required: ['id', 'event', 'target', 'status', 'attempts'],
          },
        },
        truncated: {
          type: 'boolean',
          description: `True when the message has more than ${MAX_WEBHOOK_ATTEMPTS} attempts (the oldest are left out)`,
        },
      },
      required: ['deliveries', 'truncated'],
    },
  };
}
