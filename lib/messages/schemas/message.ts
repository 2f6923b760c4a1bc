import * as v from 'valibot';
import { discriminatorMessage } from '../issues.js';
import { MSG_TYPE_NAMES } from '../limits.js';
import {
  MarkdownSchema,
  MediaSchema,
  MiniprogramNoticeSchema,
  MpNewsSchema,
  NewsSchema,
  TextCardSchema,
  TextSchema,
  VideoSchema,
} from './content.js';
import { TemplateCardSchema } from './template-card.js';

/**
 * `msgtype` plus its object, discriminated on msgtype: one option per WeCom message type, so a
 * `text` request is only ever checked against the text schema. Other top-level keys are ignored
 * here (the caller checks them).
 */
export const MessageContentSchema = v.variant(
  'msgtype',
  [
    v.object({ msgtype: v.literal('text'), text: TextSchema }),
    v.object({ msgtype: v.literal('image'), image: MediaSchema }),
    v.object({ msgtype: v.literal('voice'), voice: MediaSchema }),
    v.object({ msgtype: v.literal('video'), video: VideoSchema }),
    v.object({ msgtype: v.literal('file'), file: MediaSchema }),
    v.object({ msgtype: v.literal('textcard'), textcard: TextCardSchema }),
    v.object({ msgtype: v.literal('news'), news: NewsSchema }),
    v.object({ msgtype: v.literal('mpnews'), mpnews: MpNewsSchema }),
    v.object({ msgtype: v.literal('markdown'), markdown: MarkdownSchema }),
    v.object({ msgtype: v.literal('miniprogram_notice'), miniprogram_notice: MiniprogramNoticeSchema }),
    v.object({ msgtype: v.literal('template_card'), template_card: TemplateCardSchema }),
  ],
  discriminatorMessage(MSG_TYPE_NAMES),
);
