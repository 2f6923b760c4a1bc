import { CallbackXmlError } from './errors.js';

const CDATA_OPEN = '<![CDATA[';
const CDATA_CLOSE = ']]>';

/**
 * Rejects any markup declaration — `<!DOCTYPE`, `<!ENTITY`, comments — outside CDATA sections, in one linear
 * scan and before any parser sees the text. WeCom's XML never declares anything; a DOCTYPE is how entity
 * expansion (billion laughs) and external entities (XXE) get in, so refusing it outright is simpler and safer
 * than trusting any parser's limits. A user's text that mentions `<!DOCTYPE` arrives inside CDATA and passes.
 */
export function assertNoDeclarations(xml: string, part: 'envelope' | 'message'): void {
  let at = xml.indexOf('<!');
  while (at !== -1) {
    if (!xml.startsWith(CDATA_OPEN, at)) {
      throw new CallbackXmlError(`${part} XML must not contain declarations, DOCTYPE or comments`, part);
    }
    const close = xml.indexOf(CDATA_CLOSE, at + CDATA_OPEN.length);
    if (close === -1) throw new CallbackXmlError(`${part} XML has an unterminated CDATA section`, part);
    at = xml.indexOf('<!', close + CDATA_CLOSE.length);
  }
}

/** One element's text, without a CDATA wrapper if it has one; undefined when the element is absent. */
export function elementText(xml: string, tag: string): string | undefined {
  const open = `<${tag}>`;
  const start = xml.indexOf(open);
  if (start === -1) return undefined;
  const end = xml.indexOf(`</${tag}>`, start + open.length);
  if (end === -1) return undefined;
  const inner = xml.slice(start + open.length, end).trim();
  if (inner.startsWith(CDATA_OPEN) && inner.endsWith(CDATA_CLOSE)) {
    return inner.slice(CDATA_OPEN.length, -CDATA_CLOSE.length);
  }
  return inner;
}

/** How often `<tag>` opens in `xml` (stops counting at 2: callers only ask "exactly one?"). */
export function countOpenTags(xml: string, tag: string): number {
  const open = `<${tag}>`;
  const first = xml.indexOf(open);
  if (first === -1) return 0;
  return xml.indexOf(open, first + open.length) === -1 ? 1 : 2;
}
