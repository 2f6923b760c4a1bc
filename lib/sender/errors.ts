export class SenderError extends Error {
  override readonly name: string = 'SenderError';
  readonly code: string = 'sender_error';
}

/** No token could be obtained within the bounded wait (another holder is slow): retry the message later. */
export class TokenUnavailableError extends SenderError {
  override readonly name = 'TokenUnavailableError';
  override readonly code = 'token_unavailable';
  constructor(
    readonly corpId: string,
    readonly agentId: number,
    readonly waitedMs: number,
  ) {
    super(`no access token for ${corpId}/${agentId} after waiting ${waitedMs} ms for the refresh lock`);
  }
}
