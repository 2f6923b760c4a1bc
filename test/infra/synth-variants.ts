/**
 * `node --import tsx test/infra/synth-variants.ts DIR`: synthesizes every stack variant of INFRA_VARIANTS, with
 * bundling, as `cdk synth` does, and writes each result to DIR/<variantKey>.json (written under another name and
 * renamed, so a reader never sees half a file), then DIR/done. Started by test/infra/global-setup.ts once per
 * `vitest run`.
 *
 * All variants share one cloud assembly directory: CDK then stages each function's bundle once for the whole
 * process (its asset cache is keyed by the output directory and the bundling options, which no variant changes),
 * instead of running esbuild for every function of every synth of every test file.
 */
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { buildGatewayApp } from '../../infra/build-app.js';
import { cdkJsonContext } from './synth-context.js';
import { INFRA_VARIANTS, type VariantResult, variantKey } from './variants.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: synth-variants.ts DIR');
const outdir = mkdtempSync(path.join(dir, 'cdk.out-'));

for (const [i, variant] of INFRA_VARIANTS.entries()) {
  const context: Record<string, unknown> = { ...variant.context };
  if (variant.stagesFile !== undefined) {
    const file = path.join(dir, `stages-${i}.json`);
    writeFileSync(file, JSON.stringify(variant.stagesFile));
    context.stagesFile = file;
  }
  const schemaValidation = variant.schemaValidation ?? false;
  let result: VariantResult;
  try {
    const { stack } = buildGatewayApp({
      context: { ...cdkJsonContext(), ...context },
      builtinCloudFormationValidation: schemaValidation,
      outdir,
    });
    result = { template: Template.fromStack(stack).toJSON() };
  } catch (err) {
    result = { error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  const file = path.join(dir, `${variantKey(context, schemaValidation)}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(result));
  renameSync(`${file}.tmp`, file);
}
writeFileSync(path.join(dir, 'done'), '');
