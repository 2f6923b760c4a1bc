import { classifyErrcode, type ErrcodeClass } from './errcodes.js';

export class WecomError extends Error {
  override readonly name: string = 'WecomError';
  readonly code: string = 'wecom_error';
}

/** WeCom answered with a non-zero errcode. */
export class WecomApiError extends WecomError {
  override readonly name = 'WecomApiError';
  override readonly code = 'wecom_api_error';
  readonly errclass: ErrcodeClass;
  constructor(
    readonly errcode: number,
    readonly errmsg: string,
    readonly api: string,
  ) {
    super(`WeCom ${api} errcode ${errcode}: ${errmsg}`);
    this.errclass = classifyErrcode(errcode);
  }
}

/** No token could be obtained within the bounded wait (another holder is slow): retry the message later. */
export class TokenUnavailableError extends WecomError {
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

/**
 * No WeCom answer: network error, timeout, HTTP error or unparsable body. `reached` says whether the request may
 * have been processed (only a failure to connect proves it was not), which decides duplicate protection on retry.
 */
export class WecomTransportError extends WecomError {
  override readonly name = 'WecomTransportError';
  override readonly code = 'wecom_transport_error';
  constructor(
    message: string,
    readonly reached: 'no' | 'unknown',
    readonly transportCode: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
