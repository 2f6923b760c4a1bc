/** One attempt, as recorded on the message: what the receiver answered, or why there was no answer. */
export type DeliveryResult =
  | {
      kind: 'response';
      status: number;
      latencyMs: number;
      /** The start of the response body, control characters replaced. */
      excerpt: string;
      retryAfterSeconds?: number;
    }
  /** Never sent: the SSRF guard refused the URL or the address it resolves to. */
  | { kind: 'refused'; reason: string; address?: string; latencyMs: number }
  /** Sent or not, no answer: DNS unavailable, connection refused or reset, TLS error, timeout. */
  | { kind: 'failed'; code: string; message: string; latencyMs: number };
