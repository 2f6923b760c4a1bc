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
  /** True when WeCom was not called again: a failed `gettoken` remembered in the token item (token-failure.ts). */
  readonly remembered: boolean;
  /** For a remembered failure: when `gettoken` may be called again (epoch ms). */
  readonly retryAtMs: number | undefined;
  constructor(
    readonly errcode: number,
    readonly errmsg: string,
    readonly api: string,
    opts: { remembered?: boolean; retryAtMs?: number } = {},
  ) {
    super(
      `WeCom ${api} errcode ${errcode}: ${errmsg}${opts.remembered ? ' (remembered, not called again)' : ''}`,
    );
    this.errclass = classifyErrcode(errcode);
    this.remembered = opts.remembered === true;
    this.retryAtMs = opts.retryAtMs;
  }
}

/**
 * No token could be obtained: another holder's refresh took longer than the bounded wait, or `gettoken` failed
 * without an errcode (timeout, HTTP 5xx) and may not be called again before `retryAtMs`. Retry the message later.
 */
export class TokenUnavailableError extends WecomError {
  override readonly name = 'TokenUnavailableError';
  override readonly code = 'token_unavailable';
  constructor(
    readonly corpId: string,
    readonly agentId: number,
    readonly waitedMs: number,
    readonly retryAtMs?: number,
  ) {
    super(
      retryAtMs === undefined
        ? `no access token for ${corpId}/${agentId} after waiting ${waitedMs} ms for the refresh lock`
        : `no access token for ${corpId}/${agentId}: gettoken failed and is not called again before ${new Date(retryAtMs).toISOString()}`,
    );
  }
}

/**
 * No WeCom answer: network error, timeout, HTTP error or unparsable body. `inDoubt`: the request may have reached
 * WeCom and been processed (only a failure to connect proves it was not), which decides duplicate protection on
 * retry.
 */
export class WecomTransportError extends WecomError {
  override readonly name = 'WecomTransportError';
  override readonly code = 'wecom_transport_error';
  readonly inDoubt: boolean;
  constructor(
    message: string,
    readonly transportCode: string,
    options: { inDoubt: boolean; cause?: unknown },
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.inDoubt = options.inDoubt;
  }
}
