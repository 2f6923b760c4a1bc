import { describe, expect, it } from 'vitest';
import {
  type MessageStatus,
  PREVIEW_RECIPIENTS,
  recipientsPreview,
  STATUS,
  summaryOf,
  summaryWithFirstDelivery,
  withFirstDelivery,
} from '#lib/model/index.js';
import { messageRecord } from '#test/helpers/message-records.js';

describe('message summaries (the list entries of GET /v1/messages)', () => {
  it.each(Object.values(STATUS))(
    'fold a first delivery into a %s message exactly as the record read folds it',
    (status: MessageStatus) => {
      const record = messageRecord({ status, attempts: 2, ...(status === 'sent' ? { sentAt: 't0' } : {}) });
      const delivery = { at: '2026-12-01T08:00:03.000Z', receipt: { msgid: 'm1' } };

      expect(summaryWithFirstDelivery(summaryOf(record), delivery.at)).toEqual(
        summaryOf(withFirstDelivery(record, delivery)),
      );
    },
  );

  it('leave a summary without a first delivery as it is', () => {
    const s = summaryOf(messageRecord());
    expect(summaryWithFirstDelivery(s, undefined)).toBe(s);
  });

  it(`name the first ${PREVIEW_RECIPIENTS} recipients of each kind and count the rest`, () => {
    const users = Array.from({ length: 25 }, (_, i) => `u${i}`);
    const parties = Array.from({ length: 22 }, (_, i) => String(i));

    expect(recipientsPreview({ touser: users, toparty: parties, totag: ['7'] })).toEqual({
      touser: users.slice(0, 20),
      toparty: parties.slice(0, 20),
      totag: ['7'],
      omitted: 7,
    });
  });
});
