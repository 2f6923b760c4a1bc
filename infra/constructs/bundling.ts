import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { FunctionId } from '#lib/resources/index.js';
import { HOUSE_RUNTIME_NAME, REPO_ROOT } from './esbuild-options.js';

/** The newest Node.js LTS runtime aws-cdk-lib offers (cdk-nag AwsSolutions-L1 flags older ones). */
export const HOUSE_RUNTIME = Runtime.NODEJS_24_X;
if (HOUSE_RUNTIME.name !== HOUSE_RUNTIME_NAME) {
  throw new Error(
    `HOUSE_RUNTIME_NAME (${HOUSE_RUNTIME_NAME}) must name HOUSE_RUNTIME (${HOUSE_RUNTIME.name})`,
  );
}

/** The function's entry module in its artifact: Lambda's handler is `index.handler`. */
export const HANDLER = 'index.handler';

/**
 * A function's code asset: bundled by esbuild on this machine (no Docker on developer machines or CI), hashed by
 * what it produced, so a synth whose output did not change uploads nothing. CDK asks for it synchronously and
 * esbuild runs plugins only in its asynchronous API, so a child process of this same Node does the build
 * (./bundle-function.ts, through tsx like the CDK app itself).
 */
export function functionCode(id: FunctionId): Code {
  return Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: local bundling below always succeeds or throws.
      image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:24'),
      // CDK reuses a bundled asset under a key of the source path and these options, in which `local` (a function)
      // does not count: without a field of the function's own, every function would get the first one's bundle.
      environment: { GATEWAY_FUNCTION: id },
      local: {
        tryBundle(outputDir: string): boolean {
          execFileSync(process.execPath, ['--import', 'tsx', BUNDLE_FUNCTION_SCRIPT, id, outputDir], {
            cwd: REPO_ROOT,
            stdio: ['ignore', 'inherit', 'inherit'],
          });
          return true;
        },
      },
    },
  });
}

const BUNDLE_FUNCTION_SCRIPT = path.join(import.meta.dirname, 'bundle-function.ts');
