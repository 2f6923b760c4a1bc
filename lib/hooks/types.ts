import type { HookConfig, HookSource } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';
import type { Notice } from './notice.js';

/** One inbound delivery as the HTTP layer received it. Header names are lowercase. */
export interface HookInput {
  /** The exact bytes received: signatures are computed over them, before anything parses them. */
  rawBody: string | Buffer;
  headers: Readonly<Record<string, string | undefined>>;
  /** The gateway's clock at receipt (Alertmanager/Grafana dedup window); never read from the payload. */
  receivedAt: Date;
}

/** What a source understood of a payload, before routing and rendering. */
export interface SourceResult {
  /** Event name as the vendor calls it: `firing`, `push`, `pull_request.closed`, `event_alert`, … */
  event: string;
  /** Stable across the vendor's retries of this delivery (see each source); undefined when none exists. */
  deliveryKey?: string;
  /** The priority the content implies (alert severity); hook config and rules may override it. */
  priority?: Priority;
  /** Content; undefined means "accepted, nothing to send" (GitHub ping, an event the source does not render). */
  notice?: Notice;
  /** Why nothing is sent, when notice is undefined. */
  ignoredReason?: string;
}

/** A translator of one vendor's payloads. Pure: no I/O, no clock (input.receivedAt is the clock). */
export interface HookSourceAdapter {
  source: HookSource;
  /** Message type used when the hook does not set one. */
  defaultMsgtype: 'markdown' | 'template_card';
  /** Checks the signature over the raw body; throws HookSignatureError. Runs before the body is parsed. */
  verify?: (input: HookInput, hook: HookConfig) => void;
  /** Reads a parsed payload; throws HookPayloadError naming the fields when it is not this vendor's. */
  translate: (payload: unknown, input: HookInput, hook: HookConfig) => SourceResult;
}

/**
 * A `POST /v1/messages` body (the wire shape, so it goes through the same validation as a client's message), with
 * the Idempotency-Key it must be accepted under.
 */
export interface HookMessage {
  body: Record<string, unknown>;
  /** `hook_<sha256>`: ≤128 visible ASCII characters, as Idempotency-Key requires; undefined without a delivery key. */
  idempotencyKey?: string;
}

export type HookOutcome =
  | { kind: 'messages'; event: string; deliveryKey?: string; messages: HookMessage[] }
  | { kind: 'ignored'; event: string; deliveryKey?: string; reason: string };
