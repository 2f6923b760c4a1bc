/** Errors of the outbound-URL guard. Branch on `code` across module boundaries. */
export class NetError extends Error {
  override readonly name: string = 'NetError';
  readonly code: string = 'net_error';
}

/** The URL must not be called: wrong scheme, or its host is (or resolves to) a non-public address. */
export class UnsafeUrlError extends NetError {
  override readonly name = 'UnsafeUrlError';
  override readonly code = 'unsafe_url';
  constructor(
    message: string,
    readonly url: string,
    readonly address?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** DNS could not answer now (timeout, SERVFAIL): the URL may be fine, so the caller should retry later. */
export class LookupUnavailableError extends NetError {
  override readonly name = 'LookupUnavailableError';
  override readonly code = 'lookup_unavailable';
  constructor(
    readonly hostname: string,
    options?: { cause?: unknown },
  ) {
    super(`could not resolve ${hostname} right now`, options);
  }
}
