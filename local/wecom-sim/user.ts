import { randomBytes } from 'node:crypto';
import { cdata, sendCallback } from './callback.js';
import type { Click } from './cards.js';
import { SimulatorError } from './errors.js';
import type { CallbackTarget } from './types.js';

/**
 * The simulator playing a member of the corp: WeCom turns what a member does in the app (a button pressed on a
 * card, a message typed to the app) into an encrypted callback to the app's callback URL. The XML follows WeCom's
 * samples: 模板卡片事件推送 (path/90240) and 接收消息 › 文本消息 (path/90239).
 */
export class CallbackTargets {
  #targets: CallbackTarget[] = [];

  set(targets: CallbackTarget[]): void {
    this.#targets = [...targets];
  }

  list(): CallbackTarget[] {
    return [...this.#targets];
  }

  /** The app's callback settings; without `agentId`, the only (or first) app that has them. */
  of(corpId: string | undefined, agentId: number | undefined): CallbackTarget {
    const target = this.#targets.find(
      (t) =>
        (corpId === undefined || t.corpId === corpId) && (agentId === undefined || t.agentId === agentId),
    );
    if (!target) {
      throw new SimulatorError(
        'no callback URL is set for that app (its config needs a "callback" block with token and encodingAESKey)',
        'SIM_NO_CALLBACK_TARGET',
        { corpId, agentId },
      );
    }
    return target;
  }
}

/** The `template_card_event` / `template_card_menu_event` WeCom posts for a click. */
export function clickXml(click: Click, nowMs: number): string {
  const { card } = click;
  const selected = Object.entries(click.selected)
    .map(
      ([question, options]) =>
        `<SelectedItem><QuestionKey>${cdata(question)}</QuestionKey><OptionIds>${options
          .map((id) => `<OptionId>${cdata(id)}</OptionId>`)
          .join('')}</OptionIds></SelectedItem>`,
    )
    .join('');
  return (
    `<xml><ToUserName>${cdata(card.corpId)}</ToUserName><FromUserName>${cdata(click.userId)}</FromUserName>` +
    `<CreateTime>${Math.floor(nowMs / 1000)}</CreateTime><MsgType>${cdata('event')}</MsgType>` +
    `<Event>${cdata(click.event)}</Event><EventKey>${cdata(click.key)}</EventKey>` +
    `<TaskId>${cdata(card.taskId ?? '')}</TaskId><CardType>${cdata(String(card.card.card_type))}</CardType>` +
    `<ResponseCode>${cdata(click.responseCode)}</ResponseCode><AgentID>${card.agentId}</AgentID>` +
    (click.event === 'template_card_event' ? `<SelectedItems>${selected}</SelectedItems>` : '') +
    '</xml>'
  );
}

/** A text a member sends to the app; MsgId is WeCom's 64-bit message id. */
export function replyXml(
  target: CallbackTarget,
  userId: string,
  content: string,
  nowMs: number,
): { xml: string; msgId: string } {
  const msgId = randomBytes(8).readBigUInt64BE().toString();
  const xml =
    `<xml><ToUserName>${cdata(target.corpId)}</ToUserName><FromUserName>${cdata(userId)}</FromUserName>` +
    `<CreateTime>${Math.floor(nowMs / 1000)}</CreateTime><MsgType>${cdata('text')}</MsgType>` +
    `<Content>${cdata(content)}</Content><MsgId>${msgId}</MsgId><AgentID>${target.agentId}</AgentID></xml>`;
  return { xml, msgId };
}

/** Posts `xml` to the target's callback URL, encrypted and signed, retried as WeCom retries. */
export const postEvent = (target: CallbackTarget, xml: string, nowMs: number) =>
  sendCallback(
    {
      url: target.url,
      token: target.token,
      encodingAESKey: target.encodingAESKey,
      corpId: target.corpId,
      xml,
    },
    nowMs,
  );
