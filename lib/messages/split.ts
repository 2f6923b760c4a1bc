/**
 * Splitting long content into ordered parts that each fit WeCom's byte limit (text and markdown ≤ 2,048 bytes),
 * instead of refusing it. A part is cut where a reader would: after a paragraph, else after a line, else after a
 * word, else between graphemes, and never inside a UTF-8 character. In markdown a fenced code block or a table
 * stays whole when it fits a part; one that does not is closed at the end of a part and opened again (the fence
 * with its info string, or the table's header rows) at the start of the next. Each part starts with its marker,
 * `(1/3)` on a line of its own, so that a fence or a table that opens the part still starts a line.
 *
 * What a part adds (the marker, a closing or reopening fence, a repeated header) is kept apart from what it
 * carries of the content (`body`), so that the bodies joined are the content exactly.
 */
import { utf8Bytes } from './fit.js';

export type SplitFormat = 'text' | 'markdown';

export interface SplitOptions {
  /** WeCom's limit for one part's content, in UTF-8 bytes. */
  maxBytes: number;
  /** The most parts a message may become; more → `too-many-parts`. */
  maxParts: number;
  /** `markdown`: fenced code blocks and tables are kept whole or reopened; `text`: content is plain. */
  format: SplitFormat;
  /**
   * Written into every marker, `(1/3 · 9f2c)`: WeCom's duplicate check drops identical content to the same member
   * within its interval, so two messages that share their first part must not send it as the same bytes.
   */
  tag?: string;
}

export interface SplitPart {
  /** What is sent: marker, any reopening, the body, any closing. */
  content: string;
  /** The slice of the original content this part carries. */
  body: string;
}

export type SplitResult =
  | { kind: 'whole'; content: string }
  | { kind: 'parts'; parts: SplitPart[] }
  | { kind: 'too-many-parts'; needed: number };

/** One piece of the content, with what must surround it in a part of its own (a closing and reopening fence). */
interface Unit {
  body: string;
  /** Added before the body when the unit starts a part (a reopened fence or a table's header). */
  reopen: string;
  /** Added after the body when the unit ends a part inside an open fence. */
  close: string;
}

const segmenter = new Intl.Segmenter();
const markerOf = (tag: string | undefined) => (i: number, n: number) =>
  tag ? `(${i}/${n} · ${tag})\n` : `(${i}/${n})\n`;
// `[^\n]*`, not `.*`: a line of CRLF content ends in \r, which `.` does not match.
const FENCE = /^ {0,3}(`{3,}|~{3,})([^\n]*)$/;
const TABLE_ROW = /^ {0,3}\|/;
const TABLE_RULE = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/**
 * Splits `content` into parts of at most `maxBytes` each, markers included; `whole` when it fits as it is.
 *
 * @example splitContent('a'.repeat(3000), { maxBytes: 2048, maxParts: 10, format: 'text' }) // 2 parts
 */
export function splitContent(content: string, opts: SplitOptions): SplitResult {
  if (utf8Bytes(content) <= opts.maxBytes) return { kind: 'whole', content };
  const marker = markerOf(opts.tag);
  // The marker's size depends on the number of parts; plan with the widest marker a guess allows, then again
  // if the parts needed more digits.
  let guess = Math.ceil(utf8Bytes(content) / Math.max(1, opts.maxBytes - 8));
  for (;;) {
    const budget = opts.maxBytes - utf8Bytes(marker(guess, guess));
    if (budget < 16) throw new RangeError(`maxBytes ${opts.maxBytes} leaves no room for a part's content`);
    const packed = pack(unitsOf(content, opts.format, budget), budget);
    const n = packed.length;
    if (String(n).length > String(guess).length) {
      guess = n;
      continue;
    }
    if (n > opts.maxParts) return { kind: 'too-many-parts', needed: n };
    return {
      kind: 'parts',
      parts: packed.map((units, i) => ({
        content: marker(i + 1, n) + textOf(units),
        body: units.map((u) => u.body).join(''),
      })),
    };
  }
}

/** What a run of units sends when it makes one part: the first unit's reopening, the bodies, the last's closing. */
function textOf(units: readonly Unit[]): string {
  const first = units[0];
  const last = units[units.length - 1];
  if (!first || !last) return '';
  return first.reopen + units.map((u) => u.body).join('') + last.close;
}

const bytesOf = (units: readonly Unit[]) => utf8Bytes(textOf(units));

/** Greedy: as many units per part as fit. Every unit fits a part of its own (unitsOf cut it small enough). */
function pack(units: readonly Unit[], budget: number): Unit[][] {
  const parts: Unit[][] = [];
  let current: Unit[] = [];
  for (const unit of units) {
    if (current.length > 0 && bytesOf([...current, unit]) > budget) {
      parts.push(current);
      current = [];
    }
    current.push(unit);
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

const plain = (body: string): Unit => ({ body, reopen: '', close: '' });

/** The content as units no larger than `budget` each, in order, their bodies joined being the content. */
function unitsOf(content: string, format: SplitFormat, budget: number): Unit[] {
  const blocks =
    format === 'markdown' ? markdownBlocks(content) : [{ kind: 'prose' as const, body: content }];
  return blocks.flatMap((block) => {
    if (block.kind === 'prose') return cut(block.body, budget, 0).map(plain);
    if (utf8Bytes(block.body) <= budget) return [plain(block.body)];
    return block.kind === 'fence' ? fenceUnits(block, budget) : tableUnits(block, budget);
  });
}

type Block =
  | { kind: 'prose'; body: string }
  | { kind: 'fence'; body: string; open: string; closeLine: string }
  | { kind: 'table'; body: string; header: string };

/** Lines with their line ends, so that they join back to the content. */
const linesOf = (s: string): string[] => s.split(/(?<=\n)/).filter(Boolean);

/** Prose, fenced code blocks (to their closing fence, or the end) and tables (runs of `|` rows). */
function markdownBlocks(content: string): Block[] {
  const lines = linesOf(content);
  const blocks: Block[] = [];
  let prose = '';
  const flush = () => {
    if (prose) blocks.push({ kind: 'prose', body: prose });
    prose = '';
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] as string;
    const fence = FENCE.exec(line.replace(/\n$/, ''));
    if (fence) {
      const mark = fence[1] as string;
      let j = i + 1;
      const closes = (l: string) =>
        new RegExp(`^ {0,3}${mark[0]}{${mark.length},}\\s*$`).test(l.replace(/\n$/, ''));
      while (j < lines.length && !closes(lines[j] as string)) j++;
      flush();
      const end = Math.min(j + 1, lines.length);
      blocks.push({
        kind: 'fence',
        body: lines.slice(i, end).join(''),
        open: line.endsWith('\n') ? line : `${line}\n`,
        closeLine: mark,
      });
      i = end;
      continue;
    }
    if (TABLE_ROW.test(line)) {
      let j = i;
      while (j < lines.length && TABLE_ROW.test(lines[j] as string)) j++;
      flush();
      const rows = lines.slice(i, j);
      const headerRows = rows.length > 1 && TABLE_RULE.test((rows[1] as string).replace(/\n$/, '')) ? 2 : 0;
      const header = rows.slice(0, headerRows).join('');
      blocks.push({ kind: 'table', body: rows.join(''), header: header.endsWith('\n') ? header : '' });
      i = j;
      continue;
    }
    prose += line;
    i++;
  }
  flush();
  return blocks;
}

/**
 * A code block too long for one part, as units of whole lines (a line too long, cut): each may end a part, where
 * the fence is closed, and start one, where it is opened again with its info string.
 */
function fenceUnits(block: Extract<Block, { kind: 'fence' }>, budget: number): Unit[] {
  const reopen = block.open;
  // Room for the reopening fence before and the closing one after, whatever the unit's place.
  const room = budget - utf8Bytes(reopen) - utf8Bytes(`\n${block.closeLine}`);
  const pieces = cut(block.body, room, 1);
  return pieces.map((body, i) => ({
    body,
    reopen: i === 0 ? '' : reopen,
    // The last piece carries the block's own closing fence (or, unterminated, ends as the content does).
    close: i === pieces.length - 1 ? '' : body.endsWith('\n') ? block.closeLine : `\n${block.closeLine}`,
  }));
}

/** A table too long for one part, as units of rows: each part after the first starts with the header again. */
function tableUnits(block: Extract<Block, { kind: 'table' }>, budget: number): Unit[] {
  const room = budget - utf8Bytes(block.header);
  return cut(block.body, room, 1).map((body, i) => ({
    body,
    reopen: i === 0 ? '' : block.header,
    close: '',
  }));
}

/**
 * Cutting levels, coarsest first: after blank lines (paragraphs), after a line, after a word's spaces. Zero-width
 * splits, so the pieces always join back to what was cut.
 */
const LEVELS: RegExp[] = [/(?<=\n\n)(?!\n)/, /(?<=\n)/, /(?<=\s)(?=\S)/];

/**
 * `s` cut into pieces of at most `budget` bytes, at the coarsest level (from `level` on) that gives pieces small
 * enough, and between graphemes (or, for a grapheme larger than the budget, code points) at the end.
 */
function cut(s: string, budget: number, level: number): string[] {
  if (utf8Bytes(s) <= budget) return [s];
  const pattern = LEVELS[level];
  if (!pattern) return cutGraphemes(s, budget);
  const pieces = s.split(pattern);
  if (pieces.length <= 1) return cut(s, budget, level + 1);
  // Joins consecutive pieces while they fit, cutting finer only the pieces that alone do not.
  const out: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (utf8Bytes(piece) > budget) {
      if (current) out.push(current);
      current = '';
      out.push(...cut(piece, budget, level + 1));
      continue;
    }
    if (current && utf8Bytes(current + piece) > budget) {
      out.push(current);
      current = '';
    }
    current += piece;
  }
  if (current) out.push(current);
  return out;
}

function cutGraphemes(s: string, budget: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const { segment } of segmenter.segment(s)) {
    const pieces = utf8Bytes(segment) > budget ? [...segment] : [segment];
    for (const piece of pieces) {
      if (current && utf8Bytes(current + piece) > budget) {
        out.push(current);
        current = '';
      }
      current += piece;
    }
  }
  if (current) out.push(current);
  return out;
}

export interface SplitSettings {
  /** `apps.<name>.split`: split long text and markdown unless the message says `"split": false`. */
  byDefault: boolean;
  /** `apps.<name>.splitMaxParts`: the most parts one message may become. */
  maxParts: number;
}

/** The cap on parts when the app sets none: a runaway log must not use up a member's minute (30 messages). */
export const DEFAULT_SPLIT_MAX_PARTS = 10;
