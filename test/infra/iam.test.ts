import { beforeAll, describe, expect, it } from 'vitest';
import { callsWecom, ENV, FUNCTIONS, type FunctionId, TABLE } from '#lib/resources/index.js';
import type { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import {
  actionsOf,
  logicalId,
  resourcesOf,
  roleLogicalId,
  SYNTH_TIMEOUT_MS,
  type SynthesizedGateway,
  statementsOfRole,
  synthGateway,
} from './synth.js';

describe('IAM least privilege', () => {
  let gateway: SynthesizedGateway;
  beforeAll(() => {
    gateway = synthGateway();
  }, SYNTH_TIMEOUT_MS);

  const statements = (fn: GatewayFunction) => statementsOfRole(gateway.template, roleLogicalId(gateway, fn));
  const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
  const ids = () => {
    const stack = gateway.stack;
    const [table] = Object.keys(gateway.template.findResources('AWS::DynamoDB::GlobalTable'));
    const [secret] = Object.keys(gateway.template.findResources('AWS::SecretsManager::Secret'));
    const lanes = stack.node.findAll().filter((c) => /\/Queues\/(high|normal)$/.test(c.node.path));
    const queue = (id: string) => {
      const found = stack.node.findAll().find((c) => c.node.path.endsWith(`/Queues/${id}`));
      return arnOf(logicalId(gateway, found as never));
    };
    return {
      table: arnOf(table as string),
      taskIndex: { 'Fn::Join': ['', [arnOf(table as string), `/index/${TABLE.taskIndex.name}`]] },
      feedIndex: { 'Fn::Join': ['', [arnOf(table as string), `/index/${TABLE.feedIndex.name}`]] },
      listIndexes: [TABLE.listIndex.name, TABLE.recipientIndex.name].map((name) => ({
        'Fn::Join': ['', [arnOf(table as string), `/index/${name}`]],
      })),
      secret: { Ref: secret as string },
      lanes: lanes.map((q) => arnOf(logicalId(gateway, q))),
      laneDlqs: ['high-dlq', 'normal-dlq'].map(queue),
      notify: queue('notify'),
      notifyDlq: queue('notify-dlq'),
      logGroup: (fn: GatewayFunction) => arnOf(logicalId(gateway, fn.logGroup)),
    };
  };
  const distinct = (values: unknown[]) => [...new Set(values.map((v) => JSON.stringify(v)))].sort();

  it('grants no wildcard action anywhere in the stack', () => {
    for (const policy of Object.values(gateway.template.findResources('AWS::IAM::Policy'))) {
      const actions = actionsOf(policy.Properties.PolicyDocument.Statement);
      expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    }
  });

  it('lets ingest read, write, delete and query items, enqueue, read the lanes’ DLQs, set release timers and read the config — nothing else', () => {
    expect(new Set(actionsOf(statements(gateway.stack.ingest)))).toEqual(
      new Set([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'sqs:SendMessage',
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'iam:PassRole',
        'secretsmanager:GetSecretValue',
      ]),
    );
  });

  it('lets ingest receive, show again and delete only on the lanes’ DLQs, and send only to the lanes and notify', () => {
    const ingest = statements(gateway.stack.ingest);
    const { lanes, laneDlqs, notify } = ids();
    const on = (action: string) =>
      distinct(ingest.filter((st) => actionsOf([st]).includes(action)).flatMap((st) => resourcesOf([st])));

    for (const action of ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'])
      expect(on(action), action).toEqual(distinct(laneDlqs));
    // A redrive queues its copy on a lane; nothing of ingest's may send to a DLQ.
    expect(on('sqs:SendMessage')).toEqual(distinct([...lanes, notify]));
    // The lanes' depths for admin keys (GET /v1/apps): read only, on the lanes and their DLQs.
    expect(on('sqs:GetQueueAttributes')).toEqual(distinct([...lanes, ...laneDlqs]));
    // The other functions never touch the lanes' DLQs (SQS moves messages there itself).
    for (const fn of [gateway.stack.sender, gateway.stack.callback, gateway.stack.notify]) {
      const granted = JSON.stringify(resourcesOf(statements(fn)));
      for (const dlq of laneDlqs) expect(granted).not.toContain(JSON.stringify(dlq));
    }
  });

  it('lets ingest only Query the message list indexes, and no other function touch them', () => {
    const { listIndexes, feedIndex } = ids();
    const onIndexes = (fn: GatewayFunction) =>
      statements(fn).filter((st) => resourcesOf([st]).some((r) => JSON.stringify(r).includes('/index/')));
    const ingest = onIndexes(gateway.stack.ingest);

    expect(actionsOf(ingest)).toEqual(['dynamodb:Query']);
    expect(distinct(resourcesOf(ingest))).toEqual(distinct([feedIndex, ...listIndexes]));
    for (const fn of [gateway.stack.sender, gateway.stack.callback, gateway.stack.notify]) {
      const granted = JSON.stringify(resourcesOf(onIndexes(fn)));
      for (const index of listIndexes) expect(granted).not.toContain(JSON.stringify(index));
    }
    // BatchGetItem (a page's current state) on the table itself, never on an index.
    const batchGets = statements(gateway.stack.ingest).filter((st) =>
      actionsOf([st]).includes('dynamodb:BatchGetItem'),
    );
    expect(distinct(batchGets.flatMap((st) => resourcesOf([st])))).toEqual(distinct([ids().table]));
  });

  it('does not let ingest scan the table, query the card index, nor change message visibility on the lanes', () => {
    // Query only reads the one partition it names (a record and its first delivery), like GetItem; Scan reads all.
    const ingest = statements(gateway.stack.ingest);
    expect(actionsOf(ingest)).not.toContain('dynamodb:Scan');
    const onLanes = ingest.filter((st) =>
      ids().lanes.some((lane) => JSON.stringify(resourcesOf([st])).includes(JSON.stringify(lane))),
    );
    // SendMessage to queue; GetQueueAttributes reads the lanes' depths (GET /v1/apps, admin keys).
    expect(actionsOf(onLanes).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:SendMessage']);
    expect(distinct(resourcesOf(ingest))).not.toContain(JSON.stringify(ids().taskIndex));
    expect(distinct(resourcesOf(ingest))).toContain(JSON.stringify(ids().feedIndex));
  });

  it('lets the callback function write events, query only the card index, and queue webhooks', () => {
    const callback = statements(gateway.stack.callback);
    const { table, taskIndex, secret, notify, logGroup } = ids();

    expect(new Set(actionsOf(callback))).toEqual(
      new Set([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:Query',
        'sqs:SendMessage',
        'secretsmanager:GetSecretValue',
      ]),
    );
    expect(
      callback.filter((st) => actionsOf([st]).includes('dynamodb:Query')).flatMap((st) => resourcesOf([st])),
    ).toEqual([taskIndex]);
    expect(distinct(resourcesOf(callback))).toEqual(
      distinct([table, taskIndex, secret, notify, logGroup(gateway.stack.callback)]),
    );
  });

  it('lets notify never send to its own queue (no loop): only to its DLQ', () => {
    const notify = statements(gateway.stack.notify);
    const { notify: queue, notifyDlq } = ids();
    const sends = notify.filter((st) => actionsOf([st]).includes('sqs:SendMessage'));

    expect(sends.flatMap((st) => resourcesOf([st]))).toEqual([notifyDlq]);
    expect(
      actionsOf(notify.filter((st) => JSON.stringify(resourcesOf([st])).includes(JSON.stringify(queue)))),
    ).not.toContain('sqs:SendMessage');
    expect(
      actionsOf(notify)
        .filter((a) => a.startsWith('dynamodb:'))
        .sort(),
    ).toEqual(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });

  it('gives the sender only item actions, lane consume/send/visibility, and the config', () => {
    const actions = actionsOf(statements(gateway.stack.sender));
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(actions).toEqual(expect.arrayContaining(['sqs:SendMessage', 'sqs:ChangeMessageVisibility']));
    expect(actions.filter((a) => !/^(logs|dynamodb|sqs|secretsmanager):/.test(a))).toEqual([]);
  });

  it.each(['ingest', 'sender'] as const)(
    'scopes the %s policy to the table, lanes, notify queue, secret and its own logs',
    (name) => {
      const fn = gateway.stack[name];
      const { table, feedIndex, listIndexes, secret, lanes, laneDlqs, notify, logGroup } = ids();
      // Ingest's release timers: its group's schedules and the scheduler's role (test/infra/release-timers.test.ts).
      const timers = gateway.stack.node
        .findAll()
        .find((c) => c.node.path.endsWith('/ReleaseTimers/SchedulerRole'));
      const schedules = resourcesOf(statements(fn)).filter((r) => JSON.stringify(r).includes(':schedule/'));
      expect(distinct(resourcesOf(statements(fn)))).toEqual(
        distinct([
          table,
          secret,
          ...lanes,
          notify,
          logGroup(fn),
          ...(name === 'ingest'
            ? [
                feedIndex,
                ...listIndexes,
                ...laneDlqs,
                ...schedules,
                arnOf(logicalId(gateway, timers as never)),
              ]
            : []),
        ]),
      );
      if (name === 'ingest') expect(schedules).toHaveLength(1);
    },
  );

  it('hands callback and notify the notify queue, only notify its DLQ, and neither the lanes', () => {
    const functions = gateway.template.findResources('AWS::Lambda::Function');
    const envOf = (fn: GatewayFunction) =>
      functions[logicalId(gateway, fn.fn)]?.Properties.Environment.Variables as Record<string, unknown>;
    const callback = envOf(gateway.stack.callback);
    const notify = envOf(gateway.stack.notify);

    for (const env of [callback, notify, envOf(gateway.stack.ingest), envOf(gateway.stack.sender)]) {
      expect(env[ENV.notifyQueueUrl]).toEqual({ Ref: expect.stringMatching(/^Queuesnotify[0-9A-F]/) });
    }
    expect(notify[ENV.notifyDlqUrl]).toEqual({ Ref: expect.stringMatching(/^Queuesnotifydlq/) });
    expect(callback).not.toHaveProperty(ENV.notifyDlqUrl);
    for (const env of [callback, notify]) expect(env).not.toHaveProperty(ENV.queueUrlHigh);
  });

  it.each(['ingest', 'sender'] as const)('hands %s the names of exactly what it was granted', (name) => {
    const fn = gateway.stack[name];
    const resource = gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, fn.fn)];
    const env = resource?.Properties.Environment.Variables as Record<string, unknown>;
    const { table, secret } = ids();
    expect(env[ENV.tableName]).toEqual({ Ref: table['Fn::GetAtt'][0] });
    expect(env[ENV.configSecretId]).toEqual(secret);
    expect(env[ENV.queueUrlHigh]).toEqual({ Ref: expect.stringMatching(/^Queueshigh/) });
    expect(env[ENV.queueUrlNormal]).toEqual({ Ref: expect.stringMatching(/^Queuesnormal/) });
    if (name === 'ingest') {
      expect(env[ENV.dlqUrlHigh]).toEqual({ Ref: expect.stringMatching(/^Queueshighdlq/) });
      expect(env[ENV.dlqUrlNormal]).toEqual({ Ref: expect.stringMatching(/^Queuesnormaldlq/) });
    } else {
      expect(env).not.toHaveProperty(ENV.dlqUrlHigh);
      expect(env).not.toHaveProperty(ENV.dlqUrlNormal);
    }
  });

  // Every function that calls WeCom (FUNCTION_ACCESS), so that `wecomApiBase` (a proxy) reaches all of its calls.
  it.each((Object.keys(FUNCTIONS) as FunctionId[]).filter(callsWecom))(
    'points %s at the WeCom API',
    (name) => {
      const fn = gateway.stack[name];
      const resource = gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, fn.fn)];
      const env = resource?.Properties.Environment.Variables as Record<string, unknown>;
      expect(env[ENV.wecomApiBase]).toBe('https://qyapi.weixin.qq.com');
    },
  );
});
