import { describe, expect, it } from 'vitest';
import {
  ascii,
  expectIssues,
  expectOnlyIssue,
  expectValid,
  messageBody,
} from '#test/helpers/messages-factories.js';

const to = (recipients: Record<string, unknown>) => ({
  ...messageBody('text', recipients),
  touser: recipients.touser,
});
const ids = (n: number, prefix = '') => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

describe('recipients', () => {
  it('splits WeCom pipe syntax and trims around the pipes', () => {
    const req = expectValid(to({ touser: 'zhangsan|lisi', toparty: '1 | 2', totag: '3' }));

    expect(req.recipients).toEqual({ touser: ['zhangsan', 'lisi'], toparty: ['1', '2'], totag: ['3'] });
  });

  it('accepts arrays, and integer ids for parties and tags', () => {
    const req = expectValid(to({ touser: ['zhangsan', 'lisi'], toparty: [1, '2'], totag: 5 }));

    expect(req.recipients).toEqual({ touser: ['zhangsan', 'lisi'], toparty: ['1', '2'], totag: ['5'] });
  });

  it('removes duplicates, keeping first-seen order', () => {
    const req = expectValid(to({ touser: 'b|a|b|a', toparty: [2, '2', 1] }));

    expect(req.recipients.touser).toEqual(['b', 'a']);
    expect(req.recipients.toparty).toEqual(['2', '1']);
  });

  it('treats userids that differ only in case as one recipient, keeping the first spelling', () => {
    const req = expectValid(to({ touser: ['ZhangSan', 'lisi', 'zhangsan', 'ZHANGSAN', 'LiSi'] }));

    expect(req.recipients.touser).toEqual(['ZhangSan', 'lisi']);
  });

  it('counts the 1000-user limit after folding case', () => {
    const twice = [...ids(1000, 'u'), ...ids(1000, 'U')];

    expect(expectValid(to({ touser: twice })).recipients.touser).toHaveLength(1000);
  });

  it('accepts parties or tags alone, treating empty strings and arrays as absent', () => {
    expect(expectValid(to({ touser: '', toparty: '7' })).recipients).toEqual({
      touser: [],
      toparty: ['7'],
      totag: [],
    });
    expect(expectValid(to({ touser: [], totag: ['9'] })).recipients.totag).toEqual(['9']);
  });

  it('requires at least one recipient', () => {
    expectOnlyIssue(
      to({ touser: undefined }),
      'touser',
      'required: set at least one of touser, toparty, totag',
    );
    expectOnlyIssue(
      to({ touser: '', toparty: [], totag: '' }),
      'touser',
      'required: set at least one of touser, toparty, totag',
    );
  });

  it('rejects empty entries, naming their position', () => {
    expectOnlyIssue(to({ touser: 'a||b' }), 'touser[1]', 'empty entry');
    expectOnlyIssue(to({ touser: ['a', ' '] }), 'touser[1]', 'empty entry');
  });

  it('accepts 1000 users and rejects 1001', () => {
    expectValid(to({ touser: ids(1000, 'u').join('|') }));
    expectOnlyIssue(to({ touser: ids(1001, 'u') }), 'touser', '1001 users, max 1000');
  });

  it('counts users after removing duplicates', () => {
    expectValid(to({ touser: [...ids(1000, 'u'), 'u1'] }));
  });

  it('accepts 100 parties and 100 tags, rejects 101', () => {
    expectValid(to({ touser: undefined, toparty: ids(100), totag: ids(100) }));
    expect(expectIssues(to({ touser: undefined, toparty: ids(101), totag: ids(101).join('|') }))).toEqual([
      { field: 'toparty', message: '101 parties, max 100' },
      { field: 'totag', message: '101 tags, max 100' },
    ]);
  });

  it('limits a userid to 64 bytes', () => {
    expectValid(to({ touser: ascii(64) }));
    expectOnlyIssue(to({ touser: ['ok', ascii(65)] }), 'touser[1]', '65 bytes, max 64');
  });

  it('requires numeric department and tag ids', () => {
    expect(expectIssues(to({ toparty: 'PartyID1', totag: [-1] }))).toEqual([
      { field: 'toparty[0]', message: 'must be a numeric department id' },
      { field: 'totag[0]', message: 'must be a string or integer id' },
    ]);
  });

  it('accepts @all alone in touser', () => {
    expect(expectValid(to({ touser: '@all' })).recipients.touser).toEqual(['@all']);
  });

  it('rejects @all next to other users', () => {
    expectOnlyIssue(to({ touser: '@all|zhangsan' }), 'touser', '@all must be the only entry');
  });

  it('rejects @all as a party or tag', () => {
    expectOnlyIssue(to({ toparty: '@all' }), 'toparty[0]', 'must be a numeric department id');
  });

  it('rejects recipient fields of the wrong type', () => {
    expect(expectIssues(to({ touser: 42, toparty: { id: 1 } }))).toEqual([
      { field: 'touser', message: 'must be a string like "a|b" or an array of strings' },
      { field: 'toparty', message: 'must be a string like "a|b" or an array of strings' },
    ]);
  });

  it('rejects pipes inside array entries', () => {
    expectOnlyIssue(
      to({ touser: ['a|b'] }),
      'touser[0]',
      'must not contain |; use one array entry per recipient',
    );
  });

  it('rejects non-string users in arrays', () => {
    expectOnlyIssue(to({ touser: ['a', 7] }), 'touser[1]', 'must be a string');
  });
});
