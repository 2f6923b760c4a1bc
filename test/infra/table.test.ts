import { beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_SUMMARY_ATTRIBUTES, TABLE } from '#lib/resources/index.js';
import { SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

// TableV2 synthesizes as AWS::DynamoDB::GlobalTable with one replica in the stack's region.
const TABLE_TYPE = 'AWS::DynamoDB::GlobalTable';

interface GlobalTableResource {
  readonly Properties: {
    readonly KeySchema: unknown;
    readonly GlobalSecondaryIndexes: { IndexName: string; KeySchema: unknown; Projection: unknown }[];
    readonly AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
    readonly TimeToLiveSpecification: unknown;
    readonly BillingMode: string;
    readonly Replicas: { PointInTimeRecoverySpecification?: unknown; DeletionProtectionEnabled?: boolean }[];
  };
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

function onlyTable(gateway: SynthesizedGateway): GlobalTableResource {
  const tables = Object.values(gateway.template.findResources(TABLE_TYPE));
  expect(tables).toHaveLength(1);
  return tables[0] as GlobalTableResource;
}

describe('Table', () => {
  let dev: SynthesizedGateway;
  let prod: SynthesizedGateway;
  beforeAll(() => {
    dev = synthGateway();
    prod = synthGateway({ stage: 'prod' });
  }, SYNTH_TIMEOUT_MS);

  it('uses the key schema from lib/resources', () => {
    expect(onlyTable(dev).Properties.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ]);
  });

  it('indexes messages by app and by recipient, each copying only what a list page reads', () => {
    const indexes = onlyTable(dev).Properties.GlobalSecondaryIndexes;
    const byName = (name: string) => indexes.find((i) => i.IndexName === name);

    expect(byName(TABLE.listIndex.name)).toEqual({
      IndexName: 'byApp',
      KeySchema: [
        { AttributeName: 'listKey', KeyType: 'HASH' },
        { AttributeName: 'listSort', KeyType: 'RANGE' },
      ],
      // Never the message's content (`request`), its receipt or its events.
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...MESSAGE_SUMMARY_ATTRIBUTES] },
    });
    expect(byName(TABLE.recipientIndex.name)).toEqual({
      IndexName: 'byRecipient',
      KeySchema: [
        { AttributeName: 'toKey', KeyType: 'HASH' },
        { AttributeName: 'listSort', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['id', 'msgtype', 'expiresAt'] },
    });
    // The shared sort key is one string attribute.
    const defined = onlyTable(dev).Properties.AttributeDefinitions;
    expect(defined.filter((a) => a.AttributeName === 'listSort')).toEqual([
      { AttributeName: 'listSort', AttributeType: 'S' },
    ]);
  });

  it('expires items through TTL on expiresAt', () => {
    expect(onlyTable(dev).Properties.TimeToLiveSpecification).toEqual({
      AttributeName: TABLE.ttlAttribute,
      Enabled: true,
    });
  });

  it('enables point-in-time recovery', () => {
    for (const replica of onlyTable(dev).Properties.Replicas) {
      expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });

  it('bills on demand', () => {
    expect(onlyTable(dev).Properties.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('protects the prod table from deletion and retains it', () => {
    const table = onlyTable(prod);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    for (const replica of table.Properties.Replicas) expect(replica.DeletionProtectionEnabled).toBe(true);
  });

  it('lets non-prod stacks delete their table', () => {
    const table = onlyTable(dev);
    expect(table.DeletionPolicy).toBe('Delete');
    for (const replica of table.Properties.Replicas) expect(replica.DeletionProtectionEnabled).not.toBe(true);
  });
});
