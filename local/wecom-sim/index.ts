/**
 * WeCom server-API simulator for the local stack, integration tests and the benchmark.
 *
 * API: GET /cgi-bin/gettoken, POST /cgi-bin/message/send, POST /cgi-bin/message/recall.
 * Inspection (JSON): GET /__sim/stats, /__sim/inbox/:userId, /__sim/drops, /__sim/requests;
 * POST /__sim/reset, /__sim/faults {rate?:{kind,rate,path?}, script?:{kinds,path?}, clear?:true},
 * /__sim/latency {ms}, /__sim/invalidate-tokens.
 */
export { buildCallbackRequest } from './callback.js';
export {
  ALL_MEMBERS_INBOX,
  DEFAULT_LIMITS,
  DEFAULT_SEATS,
  DEFAULT_TOKEN_TTL_SECONDS,
  DEFAULT_WINDOWS,
  PERSON_TIMES_PER_SEAT_PER_DAY,
  RECALL_WINDOW_MS,
} from './corp.js';
export { ERRCODE } from './errcodes.js';
export { InspectionRequestError, InvalidFaultError, SimulatorConfigError, SimulatorError } from './errors.js';
export { startWecomSimulator } from './server.js';
export type {
  DroppedMessage,
  DropReason,
  FaultControl,
  FaultKind,
  FaultPath,
  LoggedRequest,
  ReceivedMessage,
  SendCallbackArgs,
  SimApp,
  SimDirectory,
  SimLimits,
  SimStats,
  SimulatorOptions,
  SimWindows,
  WecomSimulator,
} from './types.js';
