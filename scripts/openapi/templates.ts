/**
 * The OpenAPI parts of message templates (docs/templates.md): the body that sends one, `GET /v1/templates` and
 * its view. document.ts passes in what it shares (the gateway fields, recipients, common errors), so this file
 * does not import it back.
 */
import { type Json, ref, response } from './parts.js';

const variable: Json = {
  type: 'object',
  properties: {
    required: { type: 'boolean' },
    maxBytes: { type: 'integer', minimum: 1, description: 'UTF-8 bytes' },
    enum: { type: 'array', items: { type: 'string' }, minItems: 1 },
    pattern: { type: 'string', description: 'A regular expression the whole value must match' },
    example: { type: 'string' },
    description: { type: 'string' },
  },
  required: ['required'],
  additionalProperties: false,
};

export function templateParts(shared: { gatewayFields: Json; recipients: Json; commonErrors: Json }): {
  paths: Json;
  schemas: Json;
} {
  return {
    schemas: {
      SendRequest: {
        description:
          "A message built by hand, one from a template of the app, or a post to a group robot's group",
        oneOf: [ref('MessageRequest'), ref('TemplateMessageRequest'), ref('RobotMessageRequest')],
      },
      TemplateMessageRequest: {
        type: 'object',
        description:
          'A message from one of the app’s templates: the gateway fields and recipients as for any message, ' +
          'template and variables instead of msgtype and its object. Rendered when accepted, then validated ' +
          'like a message built by hand.',
        allOf: [
          shared.gatewayFields,
          shared.recipients,
          {
            type: 'object',
            properties: {
              template: { type: 'string', minLength: 1, description: 'A template id of the app' },
              variables: {
                type: 'object',
                description:
                  'Values of the template’s variables; numbers and booleans are written as JSON does',
                additionalProperties: {
                  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
                },
              },
            },
            required: ['template'],
          },
        ],
        unevaluatedProperties: false,
      },
      TemplateList: {
        type: 'object',
        properties: {
          templates: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                app: { type: 'string' },
                id: { type: 'string' },
                msgtype: { type: 'string' },
                description: { oneOf: [{ type: 'string' }, { type: 'null' }] },
                variables: { type: 'object', additionalProperties: variable },
              },
              required: ['app', 'id', 'msgtype', 'description', 'variables'],
              additionalProperties: false,
            },
          },
        },
        required: ['templates'],
        additionalProperties: false,
      },
    },
    paths: {
      '/v1/templates': {
        get: {
          operationId: 'listTemplates',
          summary: 'The message templates of an app (or of every app the key may use) with their variables',
          parameters: [
            {
              name: 'app',
              in: 'query',
              schema: { type: 'string' },
              description: 'Default: every app the key may use',
            },
          ],
          responses: {
            '200': response('The templates, by app then id', ref('TemplateList')),
            ...shared.commonErrors,
          },
        },
      },
    },
  };
}
