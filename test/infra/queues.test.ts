import { beforeAll, describe, expect, it } from 'vitest';
import {
  QUEUE_MAX_MESSAGE_BYTES,
  QUEUES,
  type QueueId,
  RELEASE_TIMERS,
  STACK_OUTPUTS,
} from '#lib/resources/index.js';
import { MIN_VISIBILITY_TO_TIMEOUT_RATIO } from '../../infra/constructs/gateway-queues.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

interface QueueResource {
  readonly Properties: {
    readonly VisibilityTimeout: number;
    readonly MessageRetentionPeriod: number;
    readonly MaximumMessageSize?: number;
    readonly SqsManagedSseEnabled?: boolean;
    readonly RedrivePolicy?: {
      deadLetterTargetArn: { 'Fn::GetAtt': [string, string] };
      maxReceiveCount: number;
    };
  };
}

describe('Queues', () => {
  let gateway: SynthesizedGateway;
  let queues: Record<string, QueueResource>;
  let deadLetterIds: Set<string>;
  beforeAll(() => {
    gateway = synthGateway();
    queues = gateway.template.findResources('AWS::SQS::Queue') as Record<string, QueueResource>;
    deadLetterIds = new Set(
      Object.values(queues).flatMap((q) => {
        const target = q.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0];
        return target ? [target] : [];
      }),
    );
  }, SYNTH_TIMEOUT_MS);

  it('creates every queue defined in lib/resources', () => {
    expect(Object.keys(queues)).toHaveLength(Object.keys(QUEUES).length);
  });

  it('redrives every non-DLQ queue with maxReceiveCount from lib/resources', () => {
    // The release timers' DLQ is EventBridge Scheduler's, set on each schedule rather than by a redrive policy.
    const releaseDlq = logicalId(
      gateway,
      gateway.stack.node
        .findAll()
        .find((c) => c.node.path.endsWith(`/Queues/${RELEASE_TIMERS.deadLetterQueueId}`)) as never,
    );
    const sources = Object.entries(queues).filter(([id]) => !deadLetterIds.has(id) && id !== releaseDlq);
    const expected = Object.values(QUEUES).flatMap((q) =>
      'deadLetter' in q ? [q.deadLetter.maxReceiveCount] : [],
    );
    expect(sources).toHaveLength(expected.length);
    expect(sources.map(([, q]) => q.Properties.RedrivePolicy?.maxReceiveCount).sort()).toEqual(
      expected.sort(),
    );
  });

  it('keeps lane visibility timeout at least 6 × the sender timeout', () => {
    const sender =
      gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, gateway.stack.sender.fn)];
    const senderTimeout = sender?.Properties.Timeout as number;
    for (const mapping of Object.values(gateway.template.findResources('AWS::Lambda::EventSourceMapping'))) {
      const laneId = (mapping.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      expect(queues[laneId]?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
        MIN_VISIBILITY_TO_TIMEOUT_RATIO * senderTimeout,
      );
    }
  });

  it("keeps every DLQ's messages longer than its source queue's (SQS expires them by their first enqueue)", () => {
    const sources = Object.values(queues).filter((q) => q.Properties.RedrivePolicy);
    // The two lanes and the notify queue.
    expect(sources).toHaveLength(3);
    for (const source of sources) {
      const dlqId = source.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0] as string;
      expect(queues[dlqId]?.Properties.MessageRetentionPeriod).toBeGreaterThan(
        source.Properties.MessageRetentionPeriod,
      );
    }
  });

  it('pins every queue’s maximum message size to what ingest checks messages against (413 above it)', () => {
    for (const queue of Object.values(queues)) {
      expect(queue.Properties.MaximumMessageSize).toBe(QUEUE_MAX_MESSAGE_BYTES);
    }
  });

  it('encrypts every queue with SQS-managed keys', () => {
    for (const queue of Object.values(queues)) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it('denies non-TLS access to every queue', () => {
    const policies = Object.values(gateway.template.findResources('AWS::SQS::QueuePolicy'));
    const protectedQueues = policies
      .filter((p) =>
        (p.Properties.PolicyDocument.Statement as { Effect: string; Condition?: unknown }[]).some(
          (s) =>
            s.Effect === 'Deny' &&
            JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
        ),
      )
      .flatMap((p) => (p.Properties.Queues as { Ref: string }[]).map((q) => q.Ref));
    expect(new Set(protectedQueues)).toEqual(new Set(Object.keys(queues)));
  });

  it('names every queue and the table in the stack outputs the operator CLI reads', () => {
    const outputs = gateway.template.findOutputs('*') as Record<string, { Value: { Ref?: string } }>;
    for (const id of Object.keys(QUEUES) as QueueId[]) {
      const name = STACK_OUTPUTS.queueUrl(id);
      expect(outputs[name]?.Value, name).toEqual({ Ref: expect.stringMatching(/^Queues/) });
    }
    expect(STACK_OUTPUTS.queueUrl('high-dlq')).toBe('QueueUrlHighDlq');
    expect(outputs[STACK_OUTPUTS.tableName]?.Value).toEqual({ Ref: expect.stringMatching(/^Store/) });
    // Each queue URL is the Ref of a queue, each a different one.
    const refs = (Object.keys(QUEUES) as QueueId[]).map(
      (id) => outputs[STACK_OUTPUTS.queueUrl(id)]?.Value.Ref,
    );
    expect(new Set(refs).size).toBe(Object.keys(QUEUES).length);
    for (const ref of refs) expect(Object.keys(queues)).toContain(ref);
  });
});
