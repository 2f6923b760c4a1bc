import { randomBytes } from 'node:crypto';
import { type ApiAnswer, apiAnswer as answer, ERRCODE } from './errcodes.js';
import { SimulatorError } from './errors.js';
import type { ClickRequest, ReceivedMessage } from './types.js';

/**
 * Template cards WeCom has delivered, as far as their interactions go: who got each card (its inbox entries), its
 * task_id, and the response codes handed out for it — one with the send answer of an interaction card, one with
 * every button press. A code is good for one `message/update_template_card`, for a limited time (更新模版卡片消息,
 * path/94945: 72 h; an older copy of the send doc: 24 h — the `responseCodeTtlHours` reading), then 60140.
 */
export interface SentCard {
  msgid: string;
  /** `corpId/agentId`: the app that sent it. */
  appKey: string;
  corpId: string;
  agentId: number;
  taskId?: string;
  card: Record<string, unknown>;
  /** Each recipient's inbox entry (userids folded to lower case, as WeCom does). */
  entries: Map<string, ReceivedMessage>;
}

interface IssuedCode {
  card: SentCard;
  issuedAt: number;
  used: boolean;
}

/** A click the simulator will post to the app's callback URL. */
export interface Click {
  card: SentCard;
  userId: string;
  event: 'template_card_event' | 'template_card_menu_event';
  key: string;
  responseCode: string;
  selected: Record<string, string[]>;
}

/** A `/__sim/click` that cannot happen: no such card, not a recipient, no such key. */
export class ClickError extends SimulatorError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, 'SIM_CLICK_INVALID', context);
    this.name = 'ClickError';
  }
}

/** WeCom: "response_code … 只能使用一次" — single use, for `ttlMs` after it was handed out. */
export class Cards {
  #byMsgid = new Map<string, SentCard>();
  #byTask = new Map<string, SentCard>();
  #codes = new Map<string, IssuedCode>();

  remember(card: SentCard): void {
    this.#byMsgid.set(card.msgid, card);
    if (card.taskId) this.#byTask.set(`${card.appKey}|${card.taskId}`, card);
  }

  /** A fresh response_code for `card`. */
  issueCode(card: SentCard, now: number): string {
    const code = randomBytes(24).toString('base64url');
    this.#codes.set(code, { card, issuedAt: now, used: false });
    return code;
  }

  /** Checks a click against what was delivered and hands out its response_code. */
  click(req: ClickRequest, now: number): Click {
    const card = req.msgid
      ? this.#byMsgid.get(req.msgid)
      : [...this.#byTask.values()].find((c) => c.taskId === req.taskId);
    if (!card) throw new ClickError('no card with that msgid or task_id was delivered', { ...req });
    const userId = req.userId.toLowerCase();
    const entry = card.entries.get(userId);
    if (!entry) throw new ClickError(`${req.userId} did not receive that card`, { msgid: card.msgid });
    if (entry.recalled) throw new ClickError('that card was recalled', { msgid: card.msgid });
    const keys = req.menu ? menuKeys(card.card) : buttonKeys(card.card);
    const key = req.key ?? keys[0];
    if (key === undefined || !keys.includes(key)) {
      throw new ClickError(`the card has no ${req.menu ? 'action_menu' : 'button'} key ${req.key ?? ''}`, {
        keys,
      });
    }
    return {
      card,
      userId,
      event: req.menu ? 'template_card_menu_event' : 'template_card_event',
      key,
      responseCode: this.issueCode(card, now),
      selected: req.selected ?? {},
    };
  }

  /** `message/update_template_card` for the app `appKey`, once its token and agentid were checked. */
  update(appKey: string, body: Record<string, unknown>, now: number, ttlMs: number): ApiAnswer {
    const code = body.response_code;
    if (typeof code !== 'string' || code === '')
      return answer(ERRCODE.emptyParameter, 'response_code missing');
    const issued = this.#codes.get(code);
    if (!issued || issued.used || now - issued.issuedAt > ttlMs) return answer(ERRCODE.invalidResponseCode);
    const { card } = issued;
    if (card.appKey !== appKey) return answer(ERRCODE.cardAppMismatch);
    const button = body.button as { replace_name?: unknown } | undefined;
    const newCard = body.template_card as Record<string, unknown> | undefined;
    if ((button === undefined) === (newCard === undefined)) {
      return answer(ERRCODE.emptyParameter, 'give button or template_card');
    }
    if (button !== undefined && (typeof button.replace_name !== 'string' || button.replace_name === '')) {
      return answer(ERRCODE.emptyParameter, 'button.replace_name missing');
    }
    const targets = this.#targets(card, body);
    if ('errcode' in targets) return targets;
    issued.used = true;
    for (const entry of targets.entries) {
      entry.updates = [
        ...(entry.updates ?? []),
        button ? { at: now, replaceName: String(button.replace_name) } : { at: now, card: newCard },
      ];
      if (newCard) entry.payload = newCard;
    }
    return answer(ERRCODE.ok);
  }

  /** Whom an update reaches: everyone with `atall`, else the named recipients (82102 for anyone else). */
  #targets(card: SentCard, body: Record<string, unknown>): { entries: ReceivedMessage[] } | ApiAnswer {
    if (body.atall === 1) return { entries: [...card.entries.values()] };
    const userids = body.userids;
    if (!Array.isArray(userids) || userids.length === 0) {
      // partyids/tagids would need the directory; the gateway names users or all.
      return answer(ERRCODE.emptyParameter, 'userids or atall required');
    }
    const entries: ReceivedMessage[] = [];
    for (const user of userids) {
      const entry = typeof user === 'string' ? card.entries.get(user.toLowerCase()) : undefined;
      if (!entry) return answer(ERRCODE.notInMessage, `${String(user)} did not receive the card`);
      entries.push(entry);
    }
    return { entries };
  }

  clear(): void {
    this.#byMsgid = new Map();
    this.#byTask = new Map();
    this.#codes = new Map();
  }
}

/** The keys a button press on the card can send: button_list keys (type 0), or the submit button's. */
function buttonKeys(card: Record<string, unknown>): string[] {
  const buttons = Array.isArray(card.button_list) ? (card.button_list as Record<string, unknown>[]) : [];
  const keys = buttons
    .filter((b) => (b.type ?? 0) === 0 && typeof b.key === 'string')
    .map((b) => b.key as string);
  const submit = (card.submit_button as { key?: unknown } | undefined)?.key;
  return typeof submit === 'string' ? [...keys, submit] : keys;
}

function menuKeys(card: Record<string, unknown>): string[] {
  const menu = card.action_menu as { action_list?: { key?: unknown }[] } | undefined;
  return (menu?.action_list ?? []).map((a) => a.key).filter((k): k is string => typeof k === 'string');
}
