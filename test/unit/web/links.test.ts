import { describe, expect, it } from 'vitest';
import { safeHref } from '../../../web/shared/links.js';

describe('safeHref', () => {
  it('keeps absolute http(s) links and turns everything else into plain text', () => {
    expect(safeHref('https://example.com/a?b=c')).toBe('https://example.com/a?b=c');
    expect(safeHref('http://example.com')).toBe('http://example.com/');
    for (const url of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'foo/bar',
      '/relative',
      '//example.com/protocol-relative',
      '',
    ]) {
      expect(safeHref(url), url).toBeUndefined();
    }
  });
});
