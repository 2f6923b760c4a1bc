export { functionCode, HANDLER, HOUSE_RUNTIME } from './bundling.js';
export { ConfigSecret, PLACEHOLDER_CONFIG } from './config-secret.js';
export { definesFor, esbuildOptionsFor, HOUSE_BUNDLING, REPO_ROOT } from './esbuild-options.js';
export { FixedEgress } from './fixed-egress.js';
export { GatewayApi } from './gateway-api.js';
export {
  type FunctionId,
  GatewayFunction,
  type GatewayFunctionProps,
  type QueueAction,
  type TableAction,
  type WecomReach,
} from './gateway-function.js';
export { assertLaneVisibility, GatewayQueues, MIN_VISIBILITY_TO_TIMEOUT_RATIO } from './gateway-queues.js';
export { GatewayTable } from './gateway-table.js';
export { LANE_AGE_ALARM_SECONDS, Monitoring } from './monitoring.js';
export { ReleaseTimers, type ReleaseTimersProps } from './release-timers.js';
