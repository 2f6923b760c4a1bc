/** A WeCom message body as the gateway sends it: `{ msgtype, [msgtype]: {…}, safe?, … }`. */
export interface MessageBody {
  msgtype: string;
  safe?: number;
  [field: string]: unknown;
}

/** What a member did on a card: pressed a button or submitted its choices, or picked an action_menu entry. */
export interface CardAction {
  kind: 'button' | 'submit' | 'menu';
  key: string;
  /** Choices on the card when it was pressed: question_key → option ids (button_selection, checkbox, select_list). */
  selected: Record<string, string[]>;
}

/** A card's state in the member's client, from the simulator's record (or the gateway's). */
export interface MessageState {
  recalled?: boolean;
  /** The last `update_template_card` with `button.replace_name`: the buttons give way to this grey text. */
  replaceName?: string;
  /** The card was replaced by `update_template_card` (the body given is the new card). */
  replaced?: boolean;
  /** The member pressed it in this session: with a `replace_text`, the buttons show that grey text. */
  pressed?: boolean;
  /** What the member chose when pressing it (question_key → option ids), shown instead of the card's defaults. */
  selected?: Record<string, string[]>;
}

export interface RenderOptions {
  /**
   * Called when a card button, submit button or menu entry is pressed. Without it the card is a preview and its
   * controls are disabled. A rejected promise re-enables them.
   */
  onCardAction?: (action: CardAction) => void | Promise<void>;
  state?: MessageState;
}

export type Json = Record<string, unknown>;

export const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
export const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);
export const str = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
