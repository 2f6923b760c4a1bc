/**
 * The parts of lib/ the CLI uses, imported from their own files: lib/config/index.ts also exports `loadConfig`,
 * which loads the Secrets Manager SDK, and lib/ingest/index.ts the whole ingest service (DynamoDB, SQS) — about
 * a second of start-up on every `wecom-gateway` call for code no command here runs.
 */
export { ConfigError } from '#lib/config/errors.js';
export { parseConfig, parseConfigJson } from '#lib/config/parse.js';
export type { GatewayConfig } from '#lib/config/schema.js';
export type { AppStateView } from '#lib/ingest/apps.js';
export { sha256Hex } from '#lib/ingest/auth.js';
export type { ReachView } from '#lib/ingest/reach.js';
export type { RobotStateView } from '#lib/ingest/robots.js';
export { renderedProblems } from '#lib/messages/template-check.js';
export { TERMINAL_STATUSES } from '#lib/model/index.js';
export { generateWebhookSecret } from '#lib/webhooks/signature.js';
export { errcodeHint } from '#lib/wecom/errcodes.js';
