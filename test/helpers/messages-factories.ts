import { expect } from 'vitest';
import {
  type AppMessageRequest,
  type CardType,
  type MessageRequest,
  type MsgType,
  type ValidateOptions,
  type ValidationIssue,
  validateMessageRequest,
} from '#lib/messages/index.js';

/**
 * Realistic `POST /v1/messages` payloads, adapted from the request examples of WeCom's 发送应用消息
 * (https://developer.work.weixin.qq.com/document/path/90236). Every factory returns a fresh object,
 * so tests may mutate it.
 */

type Json = Record<string, unknown>;

export const contentExamples = (): Record<Exclude<MsgType, 'template_card'>, Json> => ({
  text: {
    content:
      '你的快递已到，请携带工卡前往邮件中心领取。\n出发前可查看<a href="https://work.weixin.qq.com">邮件中心视频实况</a>，聪明避开排队。',
  },
  image: { media_id: 'MEDIA_ID' },
  voice: { media_id: 'MEDIA_ID' },
  video: { media_id: 'MEDIA_ID', title: 'Title', description: 'Description' },
  file: { media_id: '1Yv-zXfHjSjU-7LH-GwtYqDGS-zz6w22KmWAT5COgP7o' },
  textcard: {
    title: '领奖通知',
    description:
      '<div class="gray">2016年9月26日</div> <div class="normal">恭喜你抽中iPhone 7一台，领奖码：xxxx</div><div class="highlight">请于2016年10月10日前联系行政同事领取</div>',
    url: 'https://work.weixin.qq.com/',
    btntxt: '更多',
  },
  news: {
    articles: [
      {
        title: '中秋节礼品领取',
        description: '今年中秋节公司有豪礼相送',
        url: 'https://work.weixin.qq.com/',
        picurl: 'http://res.mail.qq.com/node/ww/wwopenmng/images/independent/doc/test_pic_msg1.png',
      },
    ],
  },
  mpnews: {
    articles: [
      {
        title: 'Title',
        thumb_media_id: 'MEDIA_ID',
        author: 'Author',
        content_source_url: 'https://work.weixin.qq.com/',
        content: 'Content',
        digest: 'Digest description',
      },
    ],
  },
  markdown: {
    content:
      '您的会议室已经预定，稍后会同步到`邮箱`\n>**事项详情**\n>事　项：<font color="info">开会</font>\n>组织者：@miglioguan',
  },
  miniprogram_notice: {
    appid: 'wx123123123123123',
    page: 'pages/index?userid=zhangsan&orderid=123123123',
    title: '会议室预订成功通知',
    description: '4月27日 16:16',
    emphasis_first_item: true,
    content_item: [
      { key: '会议室', value: '402' },
      { key: '会议地点', value: '广州TIT-402会议室' },
      { key: '会议时间', value: '2018年8月1日 09:00-09:30' },
      { key: '参与人员', value: '周剑轩' },
    ],
  },
});

export const cardExamples = (): Record<CardType, Json> => ({
  text_notice: {
    card_type: 'text_notice',
    source: {
      icon_url: 'https://wework.qpic.cn/wwpic/252813_jOfDHtcISzuodLa_1629280209/0',
      desc: '企业微信',
      desc_color: 1,
    },
    action_menu: {
      desc: '卡片副交互辅助文本说明',
      action_list: [
        { text: '接受推送', key: 'A' },
        { text: '不再推送', key: 'B' },
      ],
    },
    task_id: 'task_id',
    main_title: { title: '欢迎使用企业微信', desc: '您的好友正在邀请您加入企业微信' },
    quote_area: {
      type: 1,
      url: 'https://work.weixin.qq.com',
      title: '企业微信的引用样式',
      quote_text: '企业微信真好用呀真好用',
    },
    emphasis_content: { title: '100', desc: '核心数据' },
    sub_title_text: '下载企业微信还能抢红包！',
    horizontal_content_list: [
      { keyname: '邀请人', value: '张三' },
      { type: 1, keyname: '企业微信官网', value: '点击访问', url: 'https://work.weixin.qq.com' },
      { type: 2, keyname: '企业微信下载', value: '企业微信.apk', media_id: '文件的media_id' },
      { type: 3, keyname: '员工信息', value: '点击查看', userid: 'zhangsan' },
    ],
    jump_list: [
      { type: 1, title: '企业微信官网', url: 'https://work.weixin.qq.com' },
      { type: 2, title: '跳转小程序', appid: '小程序的appid', pagepath: '/index.html' },
    ],
    card_action: {
      type: 2,
      url: 'https://work.weixin.qq.com',
      appid: '小程序的appid',
      pagepath: '/index.html',
    },
  },
  news_notice: {
    card_type: 'news_notice',
    source: {
      icon_url: 'https://wework.qpic.cn/wwpic/252813_jOfDHtcISzuodLa_1629280209/0',
      desc: '企业微信',
    },
    main_title: { title: '欢迎使用企业微信', desc: '您的好友正在邀请您加入企业微信' },
    card_image: {
      url: 'https://wework.qpic.cn/wwpic/354393_4zpkKXd7SrGMvfg_1629280616/0',
      aspect_ratio: 2.25,
    },
    image_text_area: {
      type: 1,
      url: 'https://work.weixin.qq.com',
      title: '欢迎使用企业微信',
      desc: '您的好友正在邀请您加入企业微信',
      image_url: 'https://wework.qpic.cn/wwpic/354393_4zpkKXd7SrGMvfg_1629280616/0',
    },
    vertical_content_list: [{ title: '惊喜红包等你来拿', desc: '下载企业微信还能抢红包！' }],
    horizontal_content_list: [{ keyname: '邀请人', value: '张三' }],
    jump_list: [{ type: 1, title: '企业微信官网', url: 'https://work.weixin.qq.com' }],
    card_action: { type: 1, url: 'https://work.weixin.qq.com' },
  },
  button_interaction: {
    card_type: 'button_interaction',
    source: {
      icon_url: 'https://wework.qpic.cn/wwpic/252813_jOfDHtcISzuodLa_1629280209/0',
      desc: '企业微信',
    },
    main_title: { title: '欢迎使用企业微信', desc: '您的好友正在邀请您加入企业微信' },
    sub_title_text: '下载企业微信还能抢红包！',
    horizontal_content_list: [{ keyname: '邀请人', value: '张三' }],
    card_action: { type: 1, url: 'https://work.weixin.qq.com' },
    task_id: 'task_id',
    button_selection: {
      question_key: 'btn_question_key1',
      title: '企业微信评分',
      option_list: [
        { id: 'btn_selection_id1', text: '100分' },
        { id: 'btn_selection_id2', text: '101分' },
      ],
      selected_id: 'btn_selection_id1',
    },
    button_list: [
      { text: '按钮1', style: 1, key: 'button_key_1' },
      { text: '按钮2', style: 2, key: 'button_key_2' },
      { type: 1, text: '官网', url: 'https://work.weixin.qq.com' },
    ],
    replace_text: '已提交',
  },
  vote_interaction: {
    card_type: 'vote_interaction',
    source: {
      icon_url: 'https://wework.qpic.cn/wwpic/252813_jOfDHtcISzuodLa_1629280209/0',
      desc: '企业微信',
    },
    main_title: { title: '欢迎使用企业微信', desc: '您的好友正在邀请您加入企业微信' },
    task_id: 'task_id',
    checkbox: {
      question_key: 'question_key1',
      option_list: [
        { id: 'option_id1', text: '选择题选项1', is_checked: true },
        { id: 'option_id2', text: '选择题选项2', is_checked: false },
      ],
      mode: 1,
    },
    submit_button: { text: '提交', key: 'key' },
    replace_text: '已提交',
  },
  multiple_interaction: {
    card_type: 'multiple_interaction',
    source: {
      icon_url: 'https://wework.qpic.cn/wwpic/252813_jOfDHtcISzuodLa_1629280209/0',
      desc: '企业微信',
    },
    main_title: { title: '欢迎使用企业微信', desc: '您的好友正在邀请您加入企业微信' },
    task_id: 'task_id',
    select_list: [
      {
        question_key: 'question_key1',
        title: '选择器标签1',
        selected_id: 'selection_id1',
        option_list: [
          { id: 'selection_id1', text: '选择器选项1' },
          { id: 'selection_id2', text: '选择器选项2' },
        ],
      },
      {
        question_key: 'question_key2',
        title: '选择器标签2',
        selected_id: 'selection_id3',
        option_list: [
          { id: 'selection_id3', text: '选择器选项3' },
          { id: 'selection_id4', text: '选择器选项4' },
        ],
      },
    ],
    submit_button: { text: '提交', key: 'key' },
    replace_text: '已提交',
  },
});

/** A valid request body for `msgtype`, with the doc's example object; `extra` is merged on top. */
export function messageBody(msgtype: MsgType, extra: Json = {}): Json {
  const content = msgtype === 'template_card' ? cardExamples().text_notice : contentExamples()[msgtype];
  return { app: 'ops', touser: 'UserID1|UserID2|UserID3', msgtype, [msgtype]: content, ...extra };
}

/**
 * A valid template_card request body for `cardType`, with `changes` applied to the card: keys are
 * dot paths (`'source.desc_color'`), and `undefined` deletes the field.
 */
export function cardBody(cardType: CardType, changes: Json = {}): Json {
  const card = cardExamples()[cardType];
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop() as string;
    let target: Json = card;
    for (const key of keys) target = target[key] as Json;
    if (value === undefined) delete target[last];
    else target[last] = value;
  }
  return { app: 'ops', touser: 'UserID1', msgtype: 'template_card', template_card: card };
}

/** Validates and asserts success, returning the normalized request (an app's). */
export function expectValid(body: unknown): AppMessageRequest {
  return appRequest(expectValidRequest(body));
}

/** Validates and asserts success, returning the normalized request of either channel. */
export function expectValidRequest(body: unknown, opts?: ValidateOptions): MessageRequest {
  const result = validateMessageRequest(body, opts);
  if (!result.ok) expect.fail(`expected valid, got ${JSON.stringify(result.issues)}`);
  return result.value;
}

/** The request, asserted to be an app's. */
export function appRequest(req: MessageRequest): AppMessageRequest {
  if (req.robot !== undefined) expect.fail(`expected an app's message, got robot ${req.robot}'s`);
  return req;
}

/** Validates and asserts failure, returning the issues. */
export function expectIssues(body: unknown): ValidationIssue[] {
  const result = validateMessageRequest(body);
  if (result.ok) expect.fail('expected validation issues, got a valid request');
  return result.issues;
}

/** Asserts that validation fails with exactly this one issue. */
export function expectOnlyIssue(body: unknown, field: string, message: string): void {
  expect(expectIssues(body)).toEqual([{ field, message }]);
}

/** `n` UTF-8 bytes of ASCII. */
export const ascii = (n: number): string => 'a'.repeat(n);
/** `n` Chinese characters: 3 UTF-8 bytes each. */
export const chinese = (n: number): string => '中'.repeat(n);
