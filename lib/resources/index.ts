/**
 * The gateway's AWS resources, defined once. The CDK stack (infra/) and the offline stack (local/)
 * both build from these definitions, so a queue's redrive policy or a batch size cannot drift
 * between what users run locally and what they deploy.
 */
export {
  callsWecom,
  FUNCTION_ACCESS,
  type LaneAction,
  type LaneDlqAction,
  type NotifyQueueAction,
  type TableAction,
  type WecomCall,
} from './access.js';
export { DEFAULT_WECOM_API_BASE, ENV } from './env.js';
export {
  DEFAULT_SENDER_CONCURRENCY,
  type EventSourceDefinition,
  NOTIFY_EVENT_SOURCE,
  senderEventSources,
} from './event-sources.js';
export { FUNCTIONS, type FunctionDefinition, type FunctionId } from './functions.js';
export { STACK_OUTPUTS } from './outputs.js';
export {
  deadLetterQueueOf,
  LANES,
  type LaneName,
  localQueueName,
  MAX_RECEIVE_COUNT,
  NOTIFY_MAX_RECEIVE_COUNT,
  QUEUE_MAX_MESSAGE_BYTES,
  QUEUES,
  type QueueDefinition,
  type QueueId,
} from './queues.js';
export { RELEASE_TIMERS, type ReleaseTimerTarget, releaseTimerTarget } from './release-timers.js';
export {
  DEFAULT_ROUTE,
  dedicatedHookName,
  dedicatedHookRoute,
  hookNameOf,
  ROUTES,
  type Route,
  type RouteDefinition,
  routeKey,
  routeOf,
  WEB_ROUTES,
} from './routes.js';
export {
  type IndexName,
  type IndexProjection,
  MESSAGE_SUMMARY_ATTRIBUTES,
  projectionOf,
  TABLE,
  TABLE_INDEXES,
} from './table.js';
