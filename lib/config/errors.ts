/** Base class of configuration errors: the gateway refuses to start and says which field is wrong. */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
  readonly code: string = 'config_invalid';
  constructor(
    message: string,
    readonly issues: readonly { field: string; message: string }[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class MissingEnvError extends ConfigError {
  override readonly name = 'MissingEnvError';
  override readonly code = 'env_missing';
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is required but not set`);
  }
}
