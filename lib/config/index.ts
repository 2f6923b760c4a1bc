export { type ChannelConfig, channelConfig } from './channels.js';
export { DELIVERY_DEFAULTS, webhookSecretsOf } from './delivery-schema.js';
export { type FunctionEnv, type GatewayEnv, readEnv, readFunctionEnv, requireEnvValue } from './env.js';
export { ConfigError, MissingEnvError } from './errors.js';
export { HOOK_MSGTYPES, HOOK_SOURCES, SECRET_SOURCES } from './hooks-schema.js';
export { type ConfigText, createConfigReader, loadConfig } from './load.js';
export { parseConfig, parseConfigJson } from './parse.js';
export { ROBOT_PER_MINUTE, ROBOT_QUOTA_DEFAULTS, robotKeyOf } from './robots-schema.js';
export {
  API_KEY_SCOPES,
  type ApiKeyConfig,
  type AppConfig,
  type BroadcastConfig,
  type DeliveryConfig,
  type GatewayConfig,
  GatewayConfigSchema,
  type HookConfig,
  type HookRule,
  type HookSource,
  type PushKeyConfig,
  QUOTA_DEFAULTS,
  type QuietHoursConfig,
  type QuotaConfig,
  type RecipientsConfig,
  type RobotConfig,
  type RobotQuotaConfig,
  type TemplateConfig,
  type WebhookConfig,
} from './schema.js';
export { CONFIG_MAX_AGE_MS, ConfigSource, type ConfigSourceOptions } from './source.js';
