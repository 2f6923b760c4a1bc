import type { QueueId } from './queues.js';

/**
 * The deployed stack's CloudFormation outputs that name its table and queues, for the operator CLI
 * (`wecom-gateway apps status`, `dlq`): `TableName`, `QueueUrlHigh`, `QueueUrlHighDlq`…
 */
export const STACK_OUTPUTS = {
  tableName: 'TableName',
  queueUrl: (id: QueueId): string =>
    `QueueUrl${id
      .split('-')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('')}`,
} as const;
