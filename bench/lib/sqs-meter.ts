/**
 * Counts SQS requests per calling function and per API action, for the cost model. Unlike DynamoDB (counted on
 * the wire by the local stack's proxy), SQS calls cannot be routed through a counting proxy: the SDK sends each
 * call to the host named in its QueueUrl (`useQueueUrlAsEndpoint`), i.e. straight to the emulator. So the meter
 * wraps `SQSClient.prototype.send` — every SQS client in this process, the handlers' and the pollers' alike —
 * and attributes a call by the client's `userAgentAppId` (`wecom-gateway/<function>`; the bench's pollers use
 * `wecom-gateway/poller`; anything else is `other`).
 *
 * SQS bills every 64 KB chunk of a request's payload as one request
 * (https://aws.amazon.com/sqs/pricing/), so `billable` counts chunks, at least one per call.
 *
 * Receives that return no message are counted apart (`ReceiveMessageCommand (empty)`): fauxqs wakes *every*
 * waiting long poll when a message arrives and the losers return empty at once (fauxqs sqsStore.notifyWaiters),
 * where SQS would keep them waiting up to WaitTimeSeconds — so their number here says more about the emulator than
 * about the gateway.
 */
export const EMPTY_RECEIVE = 'ReceiveMessageCommand (empty)';

import { SQSClient } from '@aws-sdk/client-sqs';

export interface SqsCount {
  requests: number;
  billable: number;
}

export interface SqsMeter {
  /** label → action (e.g. `SendMessageBatchCommand`) → count. */
  counts(): Record<string, Record<string, SqsCount>>;
  total(label?: string): SqsCount;
  reset(): void;
  stop(): void;
}

const CHUNK = 64 * 1024;
type Send = SQSClient['send'];

let active: SqsMeter | undefined;

export function startSqsMeter(): SqsMeter {
  if (active) throw new Error('an SQS meter is already running');
  const original: Send = SQSClient.prototype.send;
  const labels = new WeakMap<object, Promise<string>>();
  let counts = new Map<string, Map<string, SqsCount>>();

  const labelOf = (client: SQSClient): Promise<string> => {
    let label = labels.get(client);
    if (!label) {
      const provider = (client.config as { userAgentAppId?: () => Promise<string | undefined> })
        .userAgentAppId;
      label = Promise.resolve(provider?.())
        .then((id) => /wecom-gateway[-/](\w+)/.exec(id ?? '')?.[1] ?? 'other')
        .catch(() => 'other');
      labels.set(client, label);
    }
    return label;
  };
  const add = (label: string, action: string, payloadBytes: number) => {
    const byAction = counts.get(label) ?? new Map<string, SqsCount>();
    const c = byAction.get(action) ?? { requests: 0, billable: 0 };
    c.requests++;
    c.billable += Math.max(1, Math.ceil(payloadBytes / CHUNK));
    byAction.set(action, c);
    counts.set(label, byAction);
  };

  // biome-ignore lint/suspicious/noExplicitAny: the SDK's overloaded send signature, passed through unchanged
  SQSClient.prototype.send = async function (this: SQSClient, command: any, ...rest: any[]) {
    const label = await labelOf(this);
    const output = await (original as (...a: unknown[]) => Promise<unknown>).call(this, command, ...rest);
    const empty =
      command.constructor.name === 'ReceiveMessageCommand' &&
      ((output as { Messages?: unknown[] } | undefined)?.Messages?.length ?? 0) === 0;
    add(label, empty ? EMPTY_RECEIVE : command.constructor.name, payloadOf(command.input, output));
    return output;
  } as Send;

  const meter: SqsMeter = {
    counts: () =>
      Object.fromEntries(
        [...counts].map(([label, m]) => [label, Object.fromEntries([...m].map(([k, v]) => [k, { ...v }]))]),
      ),
    total: (label) => {
      const sum = { requests: 0, billable: 0 };
      for (const [l, m] of counts) {
        if (label !== undefined && l !== label) continue;
        for (const c of m.values()) {
          sum.requests += c.requests;
          sum.billable += c.billable;
        }
      }
      return sum;
    },
    reset: () => {
      counts = new Map();
    },
    stop: () => {
      SQSClient.prototype.send = original;
      active = undefined;
    },
  };
  active = meter;
  return meter;
}

/** Message bytes a call carries: bodies sent, or bodies received. */
function payloadOf(input: unknown, output: unknown): number {
  const i = input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
  if (typeof i.MessageBody === 'string') return Buffer.byteLength(i.MessageBody);
  if (Array.isArray(i.Entries))
    return i.Entries.reduce((n, e) => n + (e.MessageBody ? Buffer.byteLength(e.MessageBody) : 0), 0);
  const o = output as { Messages?: { Body?: string }[] } | undefined;
  if (Array.isArray(o?.Messages))
    return o.Messages.reduce((n, m) => n + (m.Body ? Buffer.byteLength(m.Body) : 0), 0);
  return 0;
}
