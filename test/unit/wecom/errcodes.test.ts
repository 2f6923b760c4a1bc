import { describe, expect, it } from 'vitest';
import { classifyErrcode, errcodeHint } from '#lib/wecom/index.js';

describe('classifyErrcode', () => {
  it('classifies 0 as ok', () => {
    expect(classifyErrcode(0)).toBe('ok');
  });

  it.each([40014, 42001, 41001])('classifies %i as a token error (refresh and retry once)', (code) => {
    expect(classifyErrcode(code)).toBe('token');
  });

  it.each([-1, 45033, 6000])('classifies %i as retryable', (code) => {
    expect(classifyErrcode(code)).toBe('retryable');
  });

  it('classifies 45009 as rate-limited', () => {
    expect(classifyErrcode(45009)).toBe('rateLimited');
  });

  it.each([40001, 40013, 40056, 48002, 60020, 301002])('classifies %i as a configuration error', (code) => {
    expect(classifyErrcode(code)).toBe('config');
  });

  it('does not treat 40001 (bad secret) as a token error', () => {
    expect(classifyErrcode(40001)).not.toBe('token');
  });

  it.each([40003, 40008, 44004, 45002, 81013, 82001, 42052, 99999])('classifies %i as permanent', (code) => {
    expect(classifyErrcode(code)).toBe('permanent');
  });
});

describe('errcodeHint', () => {
  it("names the IP from WeCom's 60020 errmsg", () => {
    const errmsg =
      'not allow to access from your ip, hint: [1700000000_58_abc], from ip: 47.98.12.34, more info at https://open.work.weixin.qq.com/devtool/query?e=60020';

    const hint = errcodeHint(60020, errmsg);

    expect(hint).toContain('47.98.12.34');
    expect(hint).toContain('trusted IP');
  });

  it('still explains 60020 when the errmsg carries no IP', () => {
    expect(errcodeHint(60020, 'not allow to access from your ip')).toMatch(/trusted IP list/);
  });

  it('points at the secret for 40001', () => {
    expect(errcodeHint(40001)).toMatch(/secret/);
  });

  it('has no hint for an errcode the operator cannot fix', () => {
    expect(errcodeHint(-1)).toBeUndefined();
  });
});
