/**
 * WeCom's own limits for `message/send`, in one place so the validator, its tests and the WeCom
 * simulator agree.
 *
 * Source unless noted: 发送应用消息 https://developer.work.weixin.qq.com/document/path/90236
 * (same text as /document/path/90372 for third-party apps). WeCom states most text limits in UTF-8
 * bytes (字节) and a few in characters (字/文字/汉字); the names below say which.
 */

/** Message types accepted by `message/send`, in the order of the WeCom doc. */
export const MSG_TYPE_NAMES = [
  'text',
  'image',
  'voice',
  'video',
  'file',
  'textcard',
  'news',
  'mpnews',
  'markdown',
  'miniprogram_notice',
  'template_card',
] as const;

/** Message types a group robot's `webhook/send` takes (path/91770), in the order of its doc. */
export const ROBOT_MSG_TYPE_NAMES = [
  'text',
  'markdown',
  'markdown_v2',
  'image',
  'news',
  'file',
  'voice',
  'template_card',
] as const;

/** The template cards a robot may send: the two notice cards (the interactive ones need an app's callbacks). */
export const ROBOT_CARD_TYPE_NAMES = ['text_notice', 'news_notice'] as const;

export const CARD_TYPE_NAMES = [
  'text_notice',
  'news_notice',
  'button_interaction',
  'vote_interaction',
  'multiple_interaction',
] as const;

export const LIMITS = {
  recipients: {
    /** touser: "最多支持1000个". */
    maxUsers: 1000,
    /** toparty: "最多支持100个". */
    maxParties: 100,
    /** totag: "最多支持100个". */
    maxTags: 100,
    /** A userid is 1–64 bytes (成员管理/创建成员: userid 长度为1~64个字节). */
    maxUserIdBytes: 64,
    /** Department and tag ids are 32-bit unsigned integers in WeCom; 10 digits cover them. */
    maxNumericIdDigits: 10,
  },
  options: {
    /** duplicate_check_interval: "默认1800s,最大不超过4小时". */
    maxDuplicateCheckIntervalSeconds: 14_400,
  },
  text: { maxContentBytes: 2048 },
  markdown: { maxContentBytes: 2048 },
  video: { maxTitleBytes: 128, maxDescriptionBytes: 512 },
  textcard: {
    maxTitleBytes: 128,
    maxDescriptionBytes: 512,
    maxUrlBytes: 2048,
    /** btntxt: "不超过4个文字" — characters, not bytes. */
    maxBtnTxtChars: 4,
  },
  news: {
    /** "一个图文消息支持1到8条图文". */
    minArticles: 1,
    maxArticles: 8,
    maxTitleBytes: 128,
    maxDescriptionBytes: 512,
    maxUrlBytes: 2048,
    /** Not stated for picurl; the gateway applies the url limit (SPEC §5). */
    maxPicUrlBytes: 2048,
  },
  mpnews: {
    minArticles: 1,
    maxArticles: 8,
    maxTitleBytes: 128,
    maxAuthorBytes: 64,
    /** content: "不超过666 K个字节" — read as 666 × 1024 bytes. */
    maxContentBytes: 666 * 1024,
    maxDigestBytes: 512,
    /** Not stated for content_source_url; the gateway applies the common URL limit. */
    maxSourceUrlBytes: 2048,
  },
  miniprogramNotice: {
    /** page: "最长1024个字节". */
    maxPageBytes: 1024,
    /** title/description: "长度限制4-12个汉字" — characters. */
    minTitleChars: 4,
    maxTitleChars: 12,
    minDescriptionChars: 4,
    maxDescriptionChars: 12,
    /** content_item: "最多允许10个item"; key "10个汉字以内", value "30个汉字以内". */
    maxContentItems: 10,
    maxItemKeyChars: 10,
    maxItemValueChars: 30,
  },
  templateCard: {
    /** task_id: "只能由数字、字母和“_-@”组成,最长128字节". */
    maxTaskIdBytes: 128,
    /** Every callback key (button, action, question, submit): "最长支持1024字节". */
    maxKeyBytes: 1024,
    /** Option ids: "最长支持128字节,不可重复". */
    maxOptionIdBytes: 128,
    /** action_menu.action_list: "列表长度取值范围为 [1, 3]". */
    maxActions: 3,
    maxHorizontalContent: 6,
    maxJumps: 3,
    maxVerticalContent: 4,
    maxButtons: 6,
    /** checkbox.option_list: "选项个数不超过 20 个,最少1个". */
    maxCheckboxOptions: 20,
    /** button_selection / select_list option_list: "下拉选项不超过 10 个,最少1个". */
    maxSelectOptions: 10,
    /** select_list: "一个消息最多支持 3 个选择器". */
    maxSelects: 3,
    /** card_image.aspect_ratio: "宽高比要小于2.25,大于1.3,不填该参数默认1.3" (1.3 itself is the default). */
    minAspectRatio: 1.3,
    maxAspectRatio: 2.25,
  },
} as const;

/**
 * A group robot's limits (消息推送配置说明, https://developer.work.weixin.qq.com/document/path/91770): text as for an
 * app, markdown and markdown_v2 twice as long, an image sent inline, files and voice through the robot's own
 * `upload_media`.
 */
export const ROBOT_LIMITS = {
  /** text: "最长不超过2048个字节,必须是utf8编码". */
  text: { maxContentBytes: 2048 },
  /** markdown: "最长不超过4096个字节,必须是utf8编码". */
  markdown: { maxContentBytes: 4096 },
  /** markdown_v2: "最长不超过4096个字节,必须是utf8编码". */
  markdown_v2: { maxContentBytes: 4096 },
  /** image: "图片(base64编码前)最大不能超过2M,支持JPG,PNG格式". */
  image: { maxBytes: 2 * 1024 * 1024 },
  /** news: "一个图文消息支持1到8条图文"; title ≤128 bytes, description ≤512 bytes (WeCom truncates; we refuse). */
  news: { minArticles: 1, maxArticles: 8, maxTitleBytes: 128, maxDescriptionBytes: 512, maxUrlBytes: 2048 },
  /** upload_media: "所有文件size必须大于5个字节"; file ≤20 MB; voice ≤2 MB, ≤60 s, AMR only. */
  file: { minBytes: 6, maxBytes: 20 * 1024 * 1024 },
  voice: { minBytes: 6, maxBytes: 2 * 1024 * 1024 },
  /** The displayed name of an uploaded file (the form's `filename`); WeCom states no limit, 255 bytes is a file system's. */
  maxFilenameBytes: 255,
  /** mentioned_list / mentioned_mobile_list: no limit stated; a group holds at most 2,000 members. */
  maxMentions: 100,
} as const;

/** Gateway-only limits (not WeCom's): see SPEC §2. */
export const GATEWAY_LIMITS = {
  maxAppChars: 64,
  maxCallbackUrlChars: 2048,
  maxMetadataPairs: 20,
  maxMetadataKeyChars: 64,
  maxMetadataValueChars: 512,
  /** ttl_seconds: at most the 14 days a queue keeps a message (the app's delivery budget may end it sooner). */
  maxTtlSeconds: 14 * 86_400,
  /** Enough to fix a payload in one round trip without flooding the error response. */
  maxIssues: 20,
} as const;
