import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { graphemeCount } from '#lib/messages/issues.js';

export const OPENAPI_FILE = path.join(import.meta.dirname, '..', '..', 'docs', 'openapi.json');
// biome-ignore lint/suspicious/noExplicitAny: an arbitrary JSON document, read field by field by the tests
export type OpenApiDocument = any;

export const readOpenApi = (): OpenApiDocument => JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));

const DOC_ID = 'https://wecom-gateway.invalid/openapi.json';

/**
 * JSON Schema 2020-12 validators for the document's component schemas (OpenAPI 3.1 schemas are 2020-12), strict
 * (an unknown keyword or format fails compiling), with the document's own `x-` keywords enforced the way the
 * gateway counts: UTF-8 bytes and graphemes. A client generated from the document sees the same rules.
 */
export function openApiValidators(doc: OpenApiDocument = readOpenApi()) {
  // strictRequired off: `anyOf: [{ required: ['touser'] }, …]` (at least one recipient) is standard JSON Schema.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  // The document's top-level OpenAPI keys: known here, never treated as schemas.
  ajv.addVocabulary(['openapi', 'info', 'servers', 'security', 'paths', 'components']);
  ajv.addKeyword({
    keyword: 'x-max-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => Buffer.byteLength(data) <= max,
  });
  ajv.addKeyword({
    keyword: 'x-max-chars',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => graphemeCount(data) <= max,
  });
  ajv.addKeyword({
    keyword: 'x-min-chars',
    type: 'string',
    schemaType: 'number',
    validate: (min: number, data: string) => graphemeCount(data) >= min,
  });
  // A robot's base64 fields: the size of what they decode to.
  const decoded = (s: string) => Buffer.from(s, 'base64').length;
  ajv.addKeyword({
    keyword: 'x-min-decoded-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (min: number, data: string) => decoded(data) >= min,
  });
  ajv.addKeyword({
    keyword: 'x-max-decoded-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => decoded(data) <= max,
  });
  // markdown_v2: what it may not contain (case-insensitive).
  ajv.addKeyword({
    keyword: 'x-forbids',
    type: 'string',
    schemaType: 'string',
    validate: (pattern: string, data: string) => !new RegExp(pattern, 'i').test(data),
  });
  ajv.addFormat('uri', (s: string) => URL.canParse(s));
  ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s));
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const cache = new Map<string, ValidateFunction>();
  return (schemaName: string): ValidateFunction => {
    let validate = cache.get(schemaName);
    if (!validate) {
      validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${schemaName}`);
      if (!validate) throw new Error(`no schema ${schemaName} in the OpenAPI document`);
      cache.set(schemaName, validate);
    }
    return validate;
  };
}

/** `validate(data)` with the errors in the failure message, for `expect(...).toEqual([])`. */
export const schemaErrors = (validate: ValidateFunction, data: unknown): string[] =>
  validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
