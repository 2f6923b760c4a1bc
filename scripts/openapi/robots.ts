/**
 * The OpenAPI parts of group robots: the body that posts to a robot's group, `GET /v1/robots` and
 * `GET /v1/robots/{robot}`. document.ts passes in what it shares (its schema converter, common errors and the
 * pause and quota shapes of AppState), so this file does not import it back.
 */
import { RobotFieldsSchema } from '#lib/messages/robot-validate.js';
import { RobotContentSchema } from '#lib/messages/schemas/robot.js';
import { errorResponse, type Json, ref, response } from './parts.js';

export function robotParts(shared: {
  convert: (schema: never) => Json;
  commonErrors: Json;
  appStates: readonly string[];
  pause: Json;
  quota: Json;
}): { paths: Json; schemas: Json } {
  const robot = { name: 'robot', in: 'path', required: true, schema: { type: 'string' } };
  return {
    schemas: {
      RobotMessageRequest: {
        type: 'object',
        description:
          "A post to a group robot's group chat (消息推送): the robot's webhook/send body plus robot, priority, " +
          'callback_url, metadata, ttl_seconds and split. No recipients (mention people in text.mentioned_list or ' +
          "<@userid> in markdown); an app's field or msgtype is refused naming the channel that takes it. A file " +
          'or voice goes as base64 (the gateway uploads it through the robot’s upload_media), an image as base64 ' +
          '(md5 filled in when absent).',
        allOf: [shared.convert(RobotFieldsSchema as never), shared.convert(RobotContentSchema as never)],
        unevaluatedProperties: false,
      },
      RobotState: {
        type: 'object',
        description:
          'What the sender knows about a group robot right now (lib/ingest/robots.ts); never its key. ' +
          'circuit_open: WeCom answered 93000, 93004 or 93008 (pause.hint says what to do).',
        properties: {
          robot: { type: 'string' },
          state: { enum: [...shared.appStates] },
          pause: shared.pause,
          quota: shared.quota,
        },
        required: ['robot', 'state', 'pause', 'quota'],
      },
      RobotList: {
        type: 'object',
        properties: {
          robots: {
            type: 'array',
            items: {
              type: 'object',
              properties: { robot: { type: 'string' }, state: { enum: [...shared.appStates] } },
              required: ['robot', 'state'],
            },
          },
        },
        required: ['robots'],
      },
    },
    paths: {
      '/v1/robots': {
        get: {
          operationId: 'listRobots',
          summary: "The key's group robots with their state",
          responses: {
            '200': response('One entry per robot the key may use', ref('RobotList')),
            ...shared.commonErrors,
          },
        },
      },
      '/v1/robots/{robot}': {
        get: {
          operationId: 'getRobot',
          summary: "A group robot's pause or circuit state and its rolling minute",
          parameters: [robot],
          responses: {
            '200': response("The robot's state", ref('RobotState')),
            '404': errorResponse('No such robot, or one the key may not use'),
            ...shared.commonErrors,
          },
        },
      },
    },
  };
}
