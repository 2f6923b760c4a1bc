import type { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { projectionOf, TABLE, TABLE_INDEXES } from '#lib/resources/index.js';

export interface GatewayTableProps {
  /** Production keeps the table (and its data) when the stack or the resource goes away. */
  readonly protect: boolean;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The single table from `TABLE` (lib/resources). On-demand: traffic is bursty (alerts) and mostly
 * small, so provisioned capacity would either throttle the sender or sit idle.
 */
export class GatewayTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: GatewayTableProps) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS owned key: encrypted at rest at no cost and without a KMS grant on every function.
      encryption: TableEncryptionV2.dynamoOwnedKey(),
      deletionProtection: props.protect,
      removalPolicy: props.removalPolicy,
      // The card index (a card callback's TaskId → its message), the events feed (lib/store/event-store.ts) and the
      // message list by app and by recipient (lib/store/message-list.ts).
      globalSecondaryIndexes: TABLE_INDEXES.map((index) => {
        const projection = projectionOf(index);
        return {
          indexName: index.name,
          partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
          sortKey: { name: index.sortKey, type: AttributeType.STRING },
          projectionType: ProjectionType[projection.type],
          ...(projection.nonKeyAttributes ? { nonKeyAttributes: [...projection.nonKeyAttributes] } : {}),
        };
      }),
    });
  }
}
