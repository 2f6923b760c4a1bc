/** Building blocks of the OpenAPI document that its parts (document.ts, hooks.ts) share. */

export type Json = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const jsonBody = (schema: Json, examples?: Json) => ({
  content: { 'application/json': { schema, ...(examples && { examples }) } },
});
export const response = (description: string, schema: Json, headers?: Json) => ({
  description,
  ...jsonBody(schema),
  ...(headers && { headers }),
});
export const errorResponse = (description: string, headers?: Json) =>
  response(description, ref('Error'), headers);
export const RETRY_AFTER = { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } };
export const messageId = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^msg_[0-9A-HJKMNP-TV-Z]{26}$' },
};
