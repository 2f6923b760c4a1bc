import * as v from 'valibot';
import {
  EMPTY,
  maxBytes,
  maxChars,
  maxItems,
  minChars,
  minItems,
  optionalString,
  pathOf,
  requiredString,
} from '../issues.js';
import { LIMITS } from '../limits.js';

/**
 * One schema per WeCom msgtype object, as in 发送应用消息
 * (https://developer.work.weixin.qq.com/document/path/90236). Objects are strict: WeCom ignores
 * unknown fields, so a typo such as `btntext` would otherwise be dropped without a word.
 * WeCom truncates over-long titles and descriptions ("超过会自动截断"); the gateway rejects them
 * instead, so what the user sent is what the member sees.
 */

/** textcard/news urls: "请确保包含了协议头(http/https)". */
const httpUrl = (max: number) =>
  v.pipe(
    v.string(),
    v.nonEmpty(EMPTY),
    maxBytes(max),
    v.regex(/^https?:\/\/\S/i, 'must start with http:// or https://'),
  );

/** text: content "最长不超过2048个字节,超过将截断". */
export const TextSchema = v.strictObject({
  content: requiredString(LIMITS.text.maxContentBytes),
});

/** markdown: content "最长不超过2048个字节,必须是utf8编码". */
export const MarkdownSchema = v.strictObject({
  content: requiredString(LIMITS.markdown.maxContentBytes),
});

/** image, voice and file carry only a media_id from 上传临时素材. */
export const MediaSchema = v.strictObject({
  media_id: requiredString(),
});

/** video: title ≤128 bytes, description ≤512 bytes. */
export const VideoSchema = v.strictObject({
  media_id: requiredString(),
  title: optionalString(LIMITS.video.maxTitleBytes),
  description: optionalString(LIMITS.video.maxDescriptionBytes),
});

/** textcard: title, description and url are required; btntxt "不超过4个文字" (default 详情). */
export const TextCardSchema = v.strictObject({
  title: requiredString(LIMITS.textcard.maxTitleBytes),
  description: requiredString(LIMITS.textcard.maxDescriptionBytes),
  url: httpUrl(LIMITS.textcard.maxUrlBytes),
  btntxt: v.optional(v.pipe(v.string(), maxChars(LIMITS.textcard.maxBtnTxtChars))),
});

/**
 * news article: "小程序或者url必须填写一个"; appid and pagepath "必须同时填写,填写后会忽略url字段".
 */
export const NewsArticleSchema = v.pipe(
  v.strictObject({
    title: requiredString(LIMITS.news.maxTitleBytes),
    description: optionalString(LIMITS.news.maxDescriptionBytes),
    url: v.optional(httpUrl(LIMITS.news.maxUrlBytes)),
    picurl: optionalString(LIMITS.news.maxPicUrlBytes),
    appid: v.optional(v.pipe(v.string(), v.nonEmpty(EMPTY))),
    pagepath: v.optional(v.pipe(v.string(), v.nonEmpty(EMPTY))),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const article = dataset.value;
    if (article.appid !== undefined && article.pagepath === undefined) {
      addIssue({ message: 'required when appid is set', path: pathOf(article, 'pagepath') });
    } else if (article.pagepath !== undefined && article.appid === undefined) {
      addIssue({ message: 'required when pagepath is set', path: pathOf(article, 'appid') });
    } else if (article.url === undefined && article.appid === undefined) {
      addIssue({ message: 'required unless appid and pagepath are set', path: pathOf(article, 'url') });
    }
  }),
);

export const NewsSchema = v.strictObject({
  articles: v.pipe(
    v.array(NewsArticleSchema),
    minItems(LIMITS.news.minArticles, 'articles'),
    maxItems(LIMITS.news.maxArticles, 'articles'),
  ),
});

/** mpnews article: content "支持html标签,不超过666 K个字节"; author ≤64 bytes; digest ≤512 bytes. */
export const MpNewsArticleSchema = v.strictObject({
  title: requiredString(LIMITS.mpnews.maxTitleBytes),
  thumb_media_id: requiredString(),
  author: optionalString(LIMITS.mpnews.maxAuthorBytes),
  content_source_url: optionalString(LIMITS.mpnews.maxSourceUrlBytes),
  content: requiredString(LIMITS.mpnews.maxContentBytes),
  digest: optionalString(LIMITS.mpnews.maxDigestBytes),
});

export const MpNewsSchema = v.strictObject({
  articles: v.pipe(
    v.array(MpNewsArticleSchema),
    minItems(LIMITS.mpnews.minArticles, 'articles'),
    maxItems(LIMITS.mpnews.maxArticles, 'articles'),
  ),
});

const L = LIMITS.miniprogramNotice;

/**
 * miniprogram_notice: only apps linked to a mini program may send it (WeCom answers an error
 * otherwise — not checkable here). Title and description are "长度限制4-12个汉字".
 */
export const MiniprogramNoticeSchema = v.strictObject({
  appid: requiredString(),
  page: optionalString(L.maxPageBytes),
  title: v.pipe(v.string(), minChars(L.minTitleChars), maxChars(L.maxTitleChars)),
  description: v.optional(
    v.pipe(v.string(), minChars(L.minDescriptionChars), maxChars(L.maxDescriptionChars)),
  ),
  emphasis_first_item: v.optional(v.boolean()),
  content_item: v.optional(
    v.pipe(
      v.array(
        v.strictObject({
          key: v.optional(v.pipe(v.string(), maxChars(L.maxItemKeyChars))),
          value: v.optional(v.pipe(v.string(), maxChars(L.maxItemValueChars))),
        }),
      ),
      maxItems(L.maxContentItems, 'items'),
    ),
  ),
});
