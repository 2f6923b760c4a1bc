export { type GatewayEnv, readEnv } from './env.js';
export { ConfigError, MissingEnvError } from './errors.js';
export { loadConfig } from './load.js';
export { parseConfig, parseConfigJson } from './parse.js';
export {
  type ApiKeyConfig,
  type AppConfig,
  type GatewayConfig,
  GatewayConfigSchema,
  QUOTA_DEFAULTS,
  type QuotaConfig,
} from './schema.js';
