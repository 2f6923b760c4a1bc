import { describe, expect, it } from 'vitest';
import {
  ascii,
  chinese,
  expectOnlyIssue,
  expectValid,
  messageBody,
} from '#test/helpers/messages-factories.js';

describe('text message', () => {
  it('accepts the WeCom doc example and keeps the text object as sent', () => {
    const req = expectValid(messageBody('text'));

    expect(req.msgtype).toBe('text');
    expect(req.content).toEqual(messageBody('text').text);
  });

  it('accepts 2048 ASCII bytes', () => {
    expectValid(messageBody('text', { text: { content: ascii(2048) } }));
  });

  it('rejects 2049 ASCII bytes', () => {
    expectOnlyIssue(
      messageBody('text', { text: { content: ascii(2049) } }),
      'text.content',
      '2049 bytes, max 2048; send "split": true to have it delivered in parts',
    );
  });

  it('counts UTF-8 bytes: 683 Chinese characters are 2049 bytes', () => {
    expectOnlyIssue(
      messageBody('text', { text: { content: chinese(683) } }),
      'text.content',
      '2049 bytes, max 2048; send "split": true to have it delivered in parts',
    );
  });

  it('accepts 682 Chinese characters (2046 bytes)', () => {
    expectValid(messageBody('text', { text: { content: chinese(682) } }));
  });

  it('names a missing content', () => {
    expectOnlyIssue(messageBody('text', { text: {} }), 'text.content', 'required');
  });

  it('rejects empty content', () => {
    expectOnlyIssue(messageBody('text', { text: { content: '' } }), 'text.content', 'must not be empty');
  });

  it('rejects a non-string content', () => {
    expectOnlyIssue(messageBody('text', { text: { content: 42 } }), 'text.content', 'must be a string');
  });

  it('rejects unknown fields inside the text object (catches typos)', () => {
    expectOnlyIssue(
      messageBody('text', { text: { content: 'hi', mentiond: ['@all'] } }),
      'text.mentiond',
      'unknown field',
    );
  });

  it("names a robot's mention list as the robots' field, not as an unknown one", () => {
    expectOnlyIssue(
      messageBody('text', { text: { content: 'hi', mentioned_list: ['@all'] } }),
      'text.mentioned_list',
      'not for an app: text.mentioned_list is for robots (an app reaches people by touser, toparty and totag)',
    );
  });

  it('names a missing text object', () => {
    expectOnlyIssue({ app: 'ops', touser: 'u1', msgtype: 'text' }, 'text', 'required');
  });

  it('rejects a text object that is not an object', () => {
    expectOnlyIssue(messageBody('text', { text: 'hello' }), 'text', 'must be an object');
  });
});

describe('markdown message', () => {
  it('accepts the WeCom doc example', () => {
    expect(expectValid(messageBody('markdown')).content).toEqual(messageBody('markdown').markdown);
  });

  it('accepts 2048 bytes and rejects 2049', () => {
    expectValid(messageBody('markdown', { markdown: { content: ascii(2048) } }));
    expectOnlyIssue(
      messageBody('markdown', { markdown: { content: ascii(2049) } }),
      'markdown.content',
      '2049 bytes, max 2048; send "split": true to have it delivered in parts',
    );
  });

  it('counts Chinese characters as 3 bytes each', () => {
    expectOnlyIssue(
      messageBody('markdown', { markdown: { content: chinese(683) } }),
      'markdown.content',
      '2049 bytes, max 2048; send "split": true to have it delivered in parts',
    );
  });

  it('names a missing content', () => {
    expectOnlyIssue(messageBody('markdown', { markdown: {} }), 'markdown.content', 'required');
  });
});

describe.each(['image', 'voice', 'file'] as const)('%s message', (msgtype) => {
  it('accepts the WeCom doc example', () => {
    expect(expectValid(messageBody(msgtype)).content).toEqual(messageBody(msgtype)[msgtype]);
  });

  it('names a missing media_id', () => {
    expectOnlyIssue(messageBody(msgtype, { [msgtype]: {} }), `${msgtype}.media_id`, 'required');
  });

  it('rejects an empty media_id', () => {
    expectOnlyIssue(
      messageBody(msgtype, { [msgtype]: { media_id: '' } }),
      `${msgtype}.media_id`,
      'must not be empty',
    );
  });
});

describe('video message', () => {
  it('accepts the WeCom doc example', () => {
    expectValid(messageBody('video'));
  });

  it('accepts a video with only a media_id', () => {
    expectValid(messageBody('video', { video: { media_id: 'MEDIA_ID' } }));
  });

  it('names a missing media_id', () => {
    expectOnlyIssue(messageBody('video', { video: { title: 't' } }), 'video.media_id', 'required');
  });

  it('limits title to 128 bytes', () => {
    expectValid(messageBody('video', { video: { media_id: 'm', title: ascii(128) } }));
    expectOnlyIssue(
      messageBody('video', { video: { media_id: 'm', title: chinese(43) } }),
      'video.title',
      '129 bytes, max 128',
    );
  });

  it('limits description to 512 bytes', () => {
    expectOnlyIssue(
      messageBody('video', { video: { media_id: 'm', description: ascii(513) } }),
      'video.description',
      '513 bytes, max 512',
    );
  });
});
