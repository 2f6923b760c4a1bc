/**
 * Making text fit WeCom's byte limits (text.content and markdown.content ≤ 2048 bytes, textcard description ≤ 512
 * bytes, …: see limits.ts) without cutting a UTF-8 character, a grapheme (an emoji, a CJK character with a
 * combining mark) or a line in half where a whole line can be dropped instead.
 */

const encoder = new TextEncoder();
const segmenter = new Intl.Segmenter();

export const utf8Bytes = (s: string): number => encoder.encode(s).length;

export const ELLIPSIS = '…';

/**
 * Cuts `s` to at most `maxBytes` UTF-8 bytes at a grapheme boundary, ending with `…` when anything was cut.
 *
 * @example truncateUtf8('告警：磁盘已满', 12) // '告警：…'
 */
export function truncateUtf8(s: string, maxBytes: number, ellipsis = ELLIPSIS): string {
  if (utf8Bytes(s) <= maxBytes) return s;
  const budget = maxBytes - utf8Bytes(ellipsis);
  if (budget < 0) return '';
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(s)) {
    const size = utf8Bytes(segment);
    if (used + size > budget) break;
    out += segment;
    used += size;
  }
  return out.trimEnd() + ellipsis;
}

/** Cuts `s` to at most `max` user-perceived characters (for limits WeCom states in 字), ending with `ellipsis`. */
export function truncateChars(s: string, max: number, ellipsis = ELLIPSIS): string {
  const graphemes = [...segmenter.segment(s)].map((g) => g.segment);
  if (graphemes.length <= max) return s;
  const keep = Math.max(0, max - [...segmenter.segment(ellipsis)].length);
  return `${graphemes.slice(0, keep).join('').trimEnd()}${ellipsis}`;
}

/** Lines that must stay together: a heading and its body, one alert, one commit. */
export type Block = readonly string[];

export interface FitInput {
  /** Always kept (cut only if it alone is over the limit). */
  head: Block;
  /** Kept whole, in order, while they fit; the rest are counted into the "more" line. */
  blocks: readonly Block[];
  /** Kept when it fits after head and at least the "more" line; dropped before any head line. */
  tail?: Block;
  /** The line standing for `n` dropped blocks, e.g. `… 3 more alerts`; undefined for no line. */
  more: (dropped: number) => string | undefined;
}

/**
 * Joins head, as many whole blocks as fit, a "more" line for the rest, and the tail with `\n`, in at most
 * `maxBytes` UTF-8 bytes. Blocks are never cut: a reader sees three complete alerts and "… 5 more alerts", not
 * eight where the last is missing its link.
 *
 * @example fitBlocks({ head: ['## Disk full'], blocks: alerts, more: (n) => n > 0 ? `… ${n} more` : undefined }, 2048)
 */
export function fitBlocks(input: FitInput, maxBytes: number): string {
  const tail = input.tail ?? [];
  const flat = (kept: number, withTail: boolean): string[] => {
    const lines = [...input.head];
    for (const block of input.blocks.slice(0, kept)) lines.push(...block);
    const more = input.more(input.blocks.length - kept);
    if (more !== undefined) lines.push(more);
    if (withTail) lines.push(...tail);
    return lines;
  };

  const sumBytes = (lines: readonly string[]): number =>
    lines.reduce((sum, line) => sum + utf8Bytes(line), 0);
  for (const withTail of tail.length > 0 ? [true, false] : [false]) {
    // Largest number of whole blocks that fits. Kept lines grow with `kept`; the "more" line shrinks.
    const fixed = [...input.head, ...(withTail ? tail : [])];
    const fixedBytes = sumBytes(fixed);
    let best = -1;
    let keptBytes = 0;
    let keptLines = 0;
    for (let kept = 0; kept <= input.blocks.length; kept++) {
      if (kept > 0) {
        const block = input.blocks[kept - 1] ?? [];
        keptBytes += sumBytes(block);
        keptLines += block.length;
      }
      const more = input.more(input.blocks.length - kept);
      const lines = fixed.length + keptLines + (more === undefined ? 0 : 1);
      const size =
        fixedBytes + keptBytes + (more === undefined ? 0 : utf8Bytes(more)) + Math.max(0, lines - 1);
      if (size <= maxBytes) best = kept;
    }
    if (best >= 0) return flat(best, withTail).join('\n');
  }
  // Even head + "more" does not fit: cut the text as a whole.
  return truncateUtf8(flat(0, false).join('\n'), maxBytes);
}

/** Line-by-line form of {@link fitBlocks} for free text: `… 12 more lines`. */
export function fitLines(text: string, maxBytes: number): string {
  const lines = text.split('\n');
  return fitBlocks(
    {
      head: [],
      blocks: lines.map((line) => [line]),
      more: (n) => (n > 0 ? `${ELLIPSIS} ${n} more line${n === 1 ? '' : 's'}` : undefined),
    },
    maxBytes,
  );
}
