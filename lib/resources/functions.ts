/** Lambda function sizing shared by CDK and the local runner. */
export interface FunctionDefinition {
  readonly id: string;
  /** Handler file, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
}

export const FUNCTIONS = {
  ingest: { id: 'ingest', entry: 'functions/ingest/handler.ts', memoryMb: 512, timeoutSeconds: 10 },
  sender: { id: 'sender', entry: 'functions/sender/handler.ts', memoryMb: 512, timeoutSeconds: 30 },
  // WeCom waits 5 s for the answer, then retries (path/90238): a slower answer is worthless.
  callback: { id: 'callback', entry: 'functions/callback/handler.ts', memoryMb: 512, timeoutSeconds: 5 },
  // Up to 10 webhooks in parallel, each bounded to 20 s by the webhook client (lib/webhooks).
  notify: { id: 'notify', entry: 'functions/notify/handler.ts', memoryMb: 256, timeoutSeconds: 60 },
} as const satisfies Record<string, FunctionDefinition>;

export type FunctionId = keyof typeof FUNCTIONS;
