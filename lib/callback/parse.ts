import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { CallbackXmlError } from './errors.js';
import type { CallbackEvent, SelectedItem, XmlFields, XmlValue } from './events.js';
import { assertNoDeclarations } from './xml-guard.js';

/** Elements WeCom repeats; always arrays, even when one arrives. */
const REPEATED = new Set([
  'xml.SelectedItems.SelectedItem',
  'xml.SelectedItems.SelectedItem.OptionIds.OptionId',
  'xml.ExtAttr.Item',
]);

/**
 * fast-xml-parser configured for authenticated WeCom XML: every value a string (`parseTagValue: false` — a
 * 64-bit MsgId must not become a rounded number), no entity processing at all (WeCom wraps text in CDATA, and
 * DOCTYPEs are refused before parsing anyway), no attributes, bounded nesting. Tag names that could pollute
 * prototypes (`__proto__`, `constructor`) make the parser throw, which becomes `bad_xml`.
 */
const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  trimValues: true, // whitespace between elements; CDATA content is kept exactly
  maxNestedTags: 16,
  isArray: (_name, jPath) => typeof jPath === 'string' && REPEATED.has(jPath),
});

const UINT64 = /^\d{1,20}$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Parses the decrypted (authenticated) message into a {@link CallbackEvent}. A known kind whose fields are not
 * the shape WeCom documents becomes `unknown` with every field as received — an event is never lost for being
 * unexpected. Only XML that is not well-formed, declares a DOCTYPE, or lacks MsgType/CreateTime is refused.
 *
 * @example parseCallbackMessage(verifier.open(query, body)) // { kind: 'text', msgId: '4561255354251345929', … }
 * @throws CallbackXmlError
 */
export function parseCallbackMessage(xml: string): CallbackEvent {
  assertNoDeclarations(xml, 'message');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new CallbackXmlError(`message is not well-formed XML: ${valid.err.msg}`, 'message');
  }
  let doc: unknown;
  try {
    doc = parser.parse(xml);
  } catch (err) {
    throw new CallbackXmlError('message XML could not be parsed', 'message', { cause: err });
  }
  const root = isRecord(doc) ? doc.xml : undefined;
  if (!isRecord(root)) throw new CallbackXmlError('message root element must be <xml>', 'message');
  return normalise(root);
}

function normalise(root: XmlFields): CallbackEvent {
  const msgType = root.MsgType;
  const createTime = root.CreateTime;
  if (typeof msgType !== 'string' || msgType === '') {
    throw new CallbackXmlError('message has no MsgType', 'message');
  }
  if (typeof createTime !== 'string' || !UNIX_SECONDS.test(createTime)) {
    throw new CallbackXmlError('message has no CreateTime in Unix seconds', 'message');
  }
  const agentId = root.AgentID;
  const common = {
    corpId: text(root, 'ToUserName') ?? '',
    from: text(root, 'FromUserName') ?? '',
    createTime: Number(createTime),
    ...(typeof agentId === 'string' && agentId !== '' ? { agentId } : {}),
  };
  const known = msgType === 'event' ? appEvent(root, common) : userMessage(root, msgType, common);
  if (known) return known;
  const event = msgType === 'event' ? text(root, 'Event') : undefined;
  return { ...common, kind: 'unknown', msgType, ...(event ? { event } : {}), fields: root };
}

type Common = Pick<CallbackEvent, 'corpId' | 'from' | 'createTime' | 'agentId'>;

function userMessage(root: XmlFields, msgType: string, common: Common): CallbackEvent | undefined {
  const msgId = root.MsgId;
  if (typeof msgId !== 'string' || !UINT64.test(msgId)) return undefined;
  const base = { ...common, msgId };
  switch (msgType) {
    case 'text':
      return fields(root, { content: 'Content' }, (f) => ({ ...base, kind: 'text', ...f }));
    case 'image':
      return fields(root, { picUrl: 'PicUrl', mediaId: 'MediaId' }, (f) => ({
        ...base,
        kind: 'image',
        ...f,
      }));
    case 'voice':
      return fields(root, { mediaId: 'MediaId', format: 'Format' }, (f) => ({
        ...base,
        kind: 'voice',
        ...f,
      }));
    case 'video':
      return fields(root, { mediaId: 'MediaId', thumbMediaId: 'ThumbMediaId' }, (f) => ({
        ...base,
        kind: 'video',
        ...f,
      }));
    case 'location':
      return fields(
        root,
        { latitude: 'Location_X', longitude: 'Location_Y', scale: 'Scale', label: 'Label' },
        (f) => ({ ...base, kind: 'location', ...f }),
      );
    case 'link':
      return fields(
        root,
        { title: 'Title', description: 'Description', url: 'Url', picUrl: 'PicUrl' },
        (f) => ({ ...base, kind: 'link', ...f }),
      );
    default:
      return undefined;
  }
}

const CARD_FIELDS = {
  eventKey: 'EventKey',
  taskId: 'TaskId',
  cardType: 'CardType',
  responseCode: 'ResponseCode',
} as const;

function appEvent(root: XmlFields, common: Common): CallbackEvent | undefined {
  switch (text(root, 'Event')) {
    case 'enter_agent':
      return fields(root, { eventKey: 'EventKey' }, (f) => ({ ...common, kind: 'enter_agent', ...f }));
    case 'click':
      return fields(root, { eventKey: 'EventKey' }, (f) => ({ ...common, kind: 'menu_click', ...f }));
    case 'view':
      return fields(root, { eventKey: 'EventKey' }, (f) => ({ ...common, kind: 'menu_view', ...f }));
    case 'template_card_event': {
      const selectedItems = selectedItemsOf(root.SelectedItems);
      if (!selectedItems) return undefined;
      return fields(root, CARD_FIELDS, (f) => ({
        ...common,
        kind: 'template_card_event',
        ...f,
        selectedItems,
      }));
    }
    case 'template_card_menu_event':
      return fields(root, CARD_FIELDS, (f) => ({ ...common, kind: 'template_card_menu_event', ...f }));
    case 'change_contact':
      return fields(root, { changeType: 'ChangeType' }, (f) => ({
        ...common,
        kind: 'change_contact',
        ...f,
        fields: root,
      }));
    default:
      return undefined;
  }
}

/**
 * Reads the named elements as strings ('' when absent) and builds the event; undefined — so the caller keeps
 * the message as `unknown` — when one of them is not plain text.
 */
function fields<K extends string, R>(
  root: XmlFields,
  names: Record<K, string>,
  build: (values: Record<K, string>) => R,
): R | undefined {
  const values = {} as Record<K, string>;
  for (const [field, element] of Object.entries(names) as [K, string][]) {
    const value = root[element];
    if (value !== undefined && typeof value !== 'string') return undefined;
    values[field] = value ?? '';
  }
  return build(values);
}

/** `<SelectedItems><SelectedItem><QuestionKey/><OptionIds><OptionId/>…` → items; undefined if malformed. */
function selectedItemsOf(value: XmlValue | undefined): SelectedItem[] | undefined {
  if (value === undefined || value === '') return [];
  if (!isRecord(value)) return undefined;
  const items = value.SelectedItem ?? [];
  if (!Array.isArray(items)) return undefined;
  const out: SelectedItem[] = [];
  for (const item of items) {
    if (!isRecord(item) || typeof item.QuestionKey !== 'string') return undefined;
    const ids = item.OptionIds === undefined || item.OptionIds === '' ? {} : item.OptionIds;
    if (!isRecord(ids)) return undefined;
    const optionIds = ids.OptionId ?? [];
    if (!Array.isArray(optionIds) || !optionIds.every((id) => typeof id === 'string')) return undefined;
    out.push({ questionKey: item.QuestionKey, optionIds: optionIds as string[] });
  }
  return out;
}

function text(root: XmlFields, name: string): string | undefined {
  const value = root[name];
  return typeof value === 'string' ? value : undefined;
}

function isRecord(value: unknown): value is XmlFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
