/**
 * Modeled AWS cost per million delivered messages (SPEC §7: ≤ USD 3.00 and ≥ 30% below a naive design).
 *
 * Region: us-east-1 (N. Virginia), on-demand list prices, no free tier, lowest volume tier, as published on the
 * pages cited below (checked against the pricing pages as of late 2025; re-check before quoting). Everything
 * *per message* comes from measurements of the same bench run (metric `dynamo`: requests, capacity units,
 * handler durations, log bytes, WeCom calls); the prices and the few stated assumptions are the only inputs
 * that are not measured. Fixed monthly costs that do not scale with messages are left out and listed in
 * {@link EXCLUDED}.
 */

export const REGION = 'us-east-1';

export const PRICES = {
  /** HTTP API, first 300 M requests/month, per request (metered in 512 KB increments). https://aws.amazon.com/api-gateway/pricing/ */
  apiGatewayHttpPerRequest: 1.0 / 1e6,
  /** Lambda arm64 (Graviton), first 7.5 B GB-s/month. https://aws.amazon.com/lambda/pricing/ */
  lambdaArmPerGbSecond: 0.0000133334,
  /** Lambda requests. https://aws.amazon.com/lambda/pricing/ */
  lambdaPerRequest: 0.2 / 1e6,
  /** SQS standard queue, per request; every 64 KB chunk of payload is one request. https://aws.amazon.com/sqs/pricing/ */
  sqsStandardPerRequest: 0.4 / 1e6,
  /** DynamoDB on-demand, Standard table class, per write request unit (price since 2024-11-01). https://aws.amazon.com/dynamodb/pricing/on-demand/ */
  dynamoPerWru: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit. https://aws.amazon.com/dynamodb/pricing/on-demand/ */
  dynamoPerRru: 0.125 / 1e6,
  /** DynamoDB Standard table storage, per GB-month (first 25 GB free — ignored). https://aws.amazon.com/dynamodb/pricing/on-demand/ */
  dynamoStoragePerGbMonth: 0.25,
  /** CloudWatch Logs ingestion (Standard; Lambda logs are billed as vended logs from $0.50/GB). https://aws.amazon.com/cloudwatch/pricing/ */
  logsIngestionPerGb: 0.5,
  /** CloudWatch Logs storage (archived, compressed — priced here on raw bytes, an overestimate). https://aws.amazon.com/cloudwatch/pricing/ */
  logsStoragePerGbMonth: 0.03,
  /** Data transfer out to the internet, first 10 TB/month (WeCom is on the internet). https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer */
  egressPerGb: 0.09,
} as const;

/** Assumptions that are not measured by the bench. */
export const ASSUMPTIONS = {
  /** Lambda platform lines per invocation (START, END, REPORT), bytes. */
  platformLogBytesPerInvocation: 390,
  /** CloudWatch Logs counts 26 bytes of metadata per log event (conservatively billed here too). */
  logEventOverheadBytes: 26,
  /** HTTP request + TLS record overhead per outbound WeCom call, bytes on top of the JSON body. */
  wecomCallOverheadBytes: 600,
  /** A gettoken call (request + answer), bytes. */
  gettokenBytes: 900,
  /** Message records are kept `retentionDays` (default 30): at a steady monthly volume that is one month of records. */
  retentionMonths: 1,
  /** Log retention (days) as a share of a month. */
  logRetentionMonths: 1,
  /** A failed conditional write still consumes write capacity; the gateway's conditional items are < 1 KB. */
  wruPerFailedConditionalWrite: 1,
} as const;

/** Costs that do not scale with the number of messages, hence not in a per-message figure. */
export const EXCLUDED = [
  'Secrets Manager secret ($0.40/month) and its GetSecretValue calls (one per cold start)',
  'empty ReceiveMessage calls of the event source mapping (idle long polls: a few per minute per poller in AWS; the emulator returns many more, see bench/lib/sqs-meter.ts)',
  'CloudWatch custom metrics from EMF (per metric-month), alarms and dashboard',
  'NAT gateway of the optional fixed-egress mode (-c egress=fixed, ~USD 32/month + $0.045/GB)',
  'free tiers (Lambda 1 M requests + 400k GB-s, SQS 1 M requests, DynamoDB 25 GB storage, …)',
] as const;

/** Per delivered message: what one message costs in each billed unit. */
export interface UsagePerMessage {
  apiRequests: number;
  lambdaInvocations: number;
  lambdaGbSeconds: number;
  sqsRequests: number;
  dynamoWru: number;
  dynamoRru: number;
  /** Bytes of message records held for the retention period. */
  storedBytes: number;
  logBytes: number;
  egressBytes: number;
}

export interface CostBreakdown {
  /** USD per million delivered messages, by component. */
  perMillion: Record<string, number>;
  totalPerMillion: number;
}

export function priceUsage(u: UsagePerMessage): CostBreakdown {
  const GB = 1024 ** 3;
  const M = 1e6;
  const perMillion = {
    apiGateway: u.apiRequests * PRICES.apiGatewayHttpPerRequest * M,
    lambdaRequests: u.lambdaInvocations * PRICES.lambdaPerRequest * M,
    lambdaCompute: u.lambdaGbSeconds * PRICES.lambdaArmPerGbSecond * M,
    sqs: u.sqsRequests * PRICES.sqsStandardPerRequest * M,
    dynamoWrites: u.dynamoWru * PRICES.dynamoPerWru * M,
    dynamoReads: u.dynamoRru * PRICES.dynamoPerRru * M,
    dynamoStorage: ((u.storedBytes * M) / GB) * PRICES.dynamoStoragePerGbMonth * ASSUMPTIONS.retentionMonths,
    logs:
      ((u.logBytes * M) / GB) *
      (PRICES.logsIngestionPerGb + PRICES.logsStoragePerGbMonth * ASSUMPTIONS.logRetentionMonths),
    egress: ((u.egressBytes * M) / GB) * PRICES.egressPerGb,
  };
  const totalPerMillion = Object.values(perMillion).reduce((a, b) => a + b, 0);
  return { perMillion, totalPerMillion };
}

/** What the bench measured in one steady-state phase, reduced to the inputs the model needs. */
export interface MeasuredPhase {
  messages: number;
  apiRequests: number;
  memoryMb: { ingest: number; sender: number };
  ingest: { invocations: number; billedMs: number; logBytes: number; logLines: number };
  sender: { invocations: number; billedMs: number; logBytes: number; logLines: number };
  sqsBillableRequests: number;
  dynamo: { wru: number; rru: number; failedConditional: number };
  /** Mean bytes of one stored message record. */
  recordBytes: number;
  /** WRU of one message-record write. */
  recordWru: number;
  wecom: { sendCalls: number; gettokenCalls: number; bodyBytes: number; meanRoundTripMs: number };
  /** Mean DynamoDB round trip, ms. */
  dynamoOpMs: number;
}

/** The gateway's usage per message, straight from a measured phase. */
export function gatewayUsage(m: MeasuredPhase): UsagePerMessage {
  const n = m.messages;
  const invocations = m.ingest.invocations + m.sender.invocations;
  const logBytes =
    m.ingest.logBytes +
    m.sender.logBytes +
    (m.ingest.logLines + m.sender.logLines) * ASSUMPTIONS.logEventOverheadBytes +
    invocations * ASSUMPTIONS.platformLogBytesPerInvocation;
  return {
    apiRequests: m.apiRequests / n,
    lambdaInvocations: invocations / n,
    lambdaGbSeconds:
      ((m.ingest.billedMs / 1000) * m.memoryMb.ingest) / 1024 / n +
      ((m.sender.billedMs / 1000) * m.memoryMb.sender) / 1024 / n,
    sqsRequests: m.sqsBillableRequests / n,
    dynamoWru: (m.dynamo.wru + m.dynamo.failedConditional * ASSUMPTIONS.wruPerFailedConditionalWrite) / n,
    dynamoRru: m.dynamo.rru / n,
    storedBytes: m.recordBytes,
    logBytes: logBytes / n,
    egressBytes:
      (m.wecom.sendCalls * (m.wecom.bodyBytes + ASSUMPTIONS.wecomCallOverheadBytes) +
        m.wecom.gettokenCalls * ASSUMPTIONS.gettokenBytes) /
      n,
  };
}

/**
 * The naive design the gateway is compared with, built from the same measurements (one-message-per-invocation
 * phase, so that everything the naive design shares with the gateway is priced identically):
 * - API and ingest as measured (one request, one invocation, one record PutItem and one SendMessage per message);
 * - SQS batch size 1: one ReceiveMessage and one DeleteMessage per message (3 SQS requests per message);
 * - sender: one invocation per message; no token cache — a gettoken call before every send; status by
 *   read-modify-write: GetItem (strongly consistent) + PutItem `sending` + PutItem `sent` of the whole record;
 *   no quota blocks: five conditional UpdateItems per message (app minute, hour, day; member minute, hour);
 * - sender duration = the gateway's measured one-record invocation + one more WeCom round trip (gettoken) +
 *   the six extra DynamoDB round trips (GetItem, PutItem `sending`, four more counters), at the measured means;
 * - the same log lines per invocation as the gateway's sender.
 */
export function naiveUsage(m: MeasuredPhase): UsagePerMessage {
  const n = m.messages;
  const ingestMsPerMessage = m.ingest.billedMs / m.ingest.invocations;
  const gatewaySenderMsPerInvocation = m.sender.billedMs / m.sender.invocations;
  const senderMs = gatewaySenderMsPerInvocation + m.wecom.meanRoundTripMs + 6 * m.dynamoOpMs;
  const senderLogBytesPerInvocation =
    (m.sender.logBytes + m.sender.logLines * ASSUMPTIONS.logEventOverheadBytes) / m.sender.invocations;
  const ingestLogBytesPerMessage =
    (m.ingest.logBytes + m.ingest.logLines * ASSUMPTIONS.logEventOverheadBytes) / n;
  const quotaWrites = 5;
  return {
    apiRequests: 1,
    lambdaInvocations: 2,
    lambdaGbSeconds:
      ((Math.ceil(ingestMsPerMessage) / 1000) * m.memoryMb.ingest) / 1024 +
      ((Math.ceil(senderMs) / 1000) * m.memoryMb.sender) / 1024,
    sqsRequests: 3,
    // record PutItem at ingest, PutItem `sending`, PutItem `sent`, five counters
    dynamoWru: 3 * m.recordWru + quotaWrites,
    // strongly consistent GetItem of a record below 4 KB
    dynamoRru: Math.max(1, Math.ceil(m.recordBytes / 4096)),
    storedBytes: m.recordBytes,
    logBytes:
      ingestLogBytesPerMessage + senderLogBytesPerInvocation + 2 * ASSUMPTIONS.platformLogBytesPerInvocation,
    egressBytes: m.wecom.bodyBytes + ASSUMPTIONS.wecomCallOverheadBytes + ASSUMPTIONS.gettokenBytes,
  };
}
