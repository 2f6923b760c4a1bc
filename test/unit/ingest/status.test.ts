import { describe, expect, it } from 'vitest';
import { getMessage, submitMessage } from '#lib/ingest/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const apiKey = opsApiKey();

describe('getMessage', () => {
  it('answers 404 for a message of an app the key does not list', async () => {
    const f = fakeIngest();
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    const record = f.messages.records.get(id);
    if (record) record.app = 'billing';
    expect((await ingestError(getMessage(f.deps, apiKey, id))).code).toBe('not_found');
  });
});
