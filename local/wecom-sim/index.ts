/**
 * WeCom server-API simulator for the local stack, integration tests and the benchmark.
 *
 * API: GET /cgi-bin/gettoken, POST /cgi-bin/message/send, POST /cgi-bin/message/recall,
 * a group robot's POST /cgi-bin/webhook/send?key= and /cgi-bin/webhook/upload_media?key=&type= (robots.ts),
 * POST /cgi-bin/message/update_template_card (cards.ts); contacts reads
 * GET /cgi-bin/agent/get, /cgi-bin/department/simplelist, /cgi-bin/user/simplelist, /cgi-bin/tag/get and
 * POST /cgi-bin/user/list_id (contacts.ts).
 * Inspection (JSON): GET /__sim/stats, /__sim/inbox/:userId, /__sim/drops, /__sim/duplicates, /__sim/requests,
 * /__sim/readings, /__sim/directory, /__sim/members, /__sim/groups (robots' groups), /__sim/groups/:robot (a group's
 * inbox, oldest first), /__sim/timeline/:userId (newest first, with drops, suppressed
 * duplicates and undelivered sends), /__sim/stream (server-sent `change` events);
 * the inbox page GET /__sim/ui, /__sim/ui/:userId, /__sim/ui/:userId/latest (inbox-ui.ts, web/inbox);
 * POST /__sim/reset, /__sim/faults {rate?:{kind,rate,path?}, script?:{kinds,path?,times?}, clear?:true},
 * /__sim/latency {ms}, /__sim/invalidate-tokens, /__sim/readings {preset?, ...fields},
 * /__sim/directory {SimDirectory}, /__sim/clock {offsetMs} | {advanceMs}, /__sim/robots {robots: [{key, name?, state?}]}.
 * Playing a member (user.ts): POST /__sim/click {userid, task_id | msgid, key?, menu?, selected_items?} presses a
 * button of a delivered card, POST /__sim/reply {userid, content, agentid?} sends the app a text — each posted to
 * the app's callback URL encrypted and signed as WeCom does, retried as WeCom retries.
 *
 * Ambiguous WeCom rules are played under readings (readings.ts): `DEFAULT_READINGS` unless options say otherwise.
 */
export { buildCallbackRequest } from './callback.js';
export { ClickError } from './cards.js';
export {
  ALL_MEMBERS_INBOX,
  DEFAULT_LIMITS,
  DEFAULT_SEATS,
  DEFAULT_TOKEN_TTL_SECONDS,
  DEFAULT_WINDOWS,
  PERSON_TIMES_PER_SEAT_PER_DAY,
  RECALL_WINDOW_MS,
} from './corp.js';
export type { SuppressedDuplicate } from './duplicates.js';
export { ERRCODE } from './errcodes.js';
export { InspectionRequestError, InvalidFaultError, SimulatorConfigError, SimulatorError } from './errors.js';
export {
  DEFAULT_READINGS,
  InvalidReadingsError,
  LENIENT_READINGS,
  READING_PRESETS,
  type ReadingPreset,
  resolveReadings,
  type SimReadings,
  type SimReadingsInput,
  STRICT_READINGS,
} from './readings.js';
export { DEFAULT_ROBOT_PER_MINUTE, ROBOT_ERRCODE, ROBOT_MEDIA_TTL_MS } from './robots.js';
export { startWecomSimulator } from './server.js';
export type { Timeline, TimelineItem } from './timeline.js';
export type {
  CallbackTarget,
  DroppedMessage,
  DropReason,
  FaultControl,
  FaultKind,
  FaultPath,
  GroupMessage,
  LoggedRequest,
  ReceivedMessage,
  SendCallbackArgs,
  SimApp,
  SimAppRange,
  SimDirectory,
  SimGroup,
  SimLimits,
  SimMember,
  SimRobot,
  SimRobotState,
  SimStats,
  SimulatorOptions,
  SimWindows,
  UndeliveredMessage,
  WecomSimulator,
} from './types.js';
