import type { Metric } from '../lib/harness.js';
import { allstaff } from './allstaff.js';
import { callbackBurst } from './callback.js';
import { callbackIsolated } from './callback-isolated.js';
import { chaos } from './chaos.js';
import { coldInit } from './cold-init.js';
import { cost } from './cost.js';
import { dynamoRequests } from './dynamo-requests.js';
import { e2eLatency } from './e2e-latency.js';
import { ingestThroughput } from './ingest-throughput.js';
import { isolated } from './isolated.js';
import { peakRss } from './peak-rss.js';
import { profile } from './profile.js';
import { quotaUtilisation } from './quota.js';
import { scheduling } from './scheduling.js';
import { senderIsolated } from './sender-isolated.js';
import { senderThroughput } from './sender-throughput.js';
import { tokenStorm } from './token-storm.js';
import { wrongSecret } from './wrong-secret.js';

/**
 * In run order: cheap and independent first; `cost` after `dynamo`, whose measurements it prices. The opt-in ones
 * (`allstaff`, `profile`) run only when named in `--only`.
 */
export const METRICS: readonly Metric[] = [
  tokenStorm,
  wrongSecret,
  quotaUtilisation,
  dynamoRequests,
  cost,
  ingestThroughput,
  senderThroughput,
  isolated,
  senderIsolated,
  e2eLatency,
  scheduling,
  callbackBurst,
  callbackIsolated,
  coldInit,
  peakRss,
  chaos,
  allstaff,
  profile,
];
