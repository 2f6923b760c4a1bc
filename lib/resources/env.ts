/** Names of the environment variables the functions read (all read in lib/config/env.ts). */
export const ENV = {
  tableName: 'TABLE_NAME',
  queueUrlHigh: 'QUEUE_URL_HIGH',
  queueUrlNormal: 'QUEUE_URL_NORMAL',
  /** The notify queue (webhook jobs) and its DLQ (jobs whose retries ran out). */
  notifyQueueUrl: 'NOTIFY_QUEUE_URL',
  notifyDlqUrl: 'NOTIFY_DLQ_URL',
  /** The lanes' dead-letter queues: only ingest gets them (the DLQ over HTTP, `/v1/dlq`). */
  dlqUrlHigh: 'DLQ_URL_HIGH',
  dlqUrlNormal: 'DLQ_URL_NORMAL',
  /** The release timers' target settings, JSON (lib/resources `ReleaseTimerTarget`): only ingest sets timers. */
  releaseTimers: 'RELEASE_TIMERS',
  /** Secrets Manager secret (name or ARN) holding the config JSON, in AWS. */
  configSecretId: 'CONFIG_SECRET_ID',
  /** Path of the config JSON file, locally. */
  configFile: 'GATEWAY_CONFIG',
  wecomApiBase: 'WECOM_API_BASE',
  logLevel: 'LOG_LEVEL',
  /** The deployment stage (`dev`, `prod`…; `local` offline): the functions' metric namespace. */
  stage: 'GATEWAY_STAGE',
} as const;

export const DEFAULT_WECOM_API_BASE = 'https://qyapi.weixin.qq.com';
