import { describe, expect, it } from 'vitest';
import { isPortClash, portClashMessage } from '#local/port-clash.js';

describe('portClashMessage', () => {
  it('names the port, what needs it, and the PORT that avoids both of npm start’s ports', () => {
    expect(portClashMessage({ port: 3001, apiPort: 3000 })).toMatch(
      /^port 3001 for the WeCom simulator \(PORT \+ 1\) is in use \(127\.0\.0\.1:3001\)\. Another program .*PORT=3002 npm start/,
    );
  });

  it('says when the holder is another npm start of this checkout, with its pid', () => {
    const running = { apiUrl: 'http://127.0.0.1:3000', pid: 4242 };
    expect(portClashMessage({ port: 3000, apiPort: 3000, running })).toContain(
      'Another `npm start` of this checkout holds it (pid 4242, API http://127.0.0.1:3000)',
    );
  });

  it('recognises only a listen error with its port', () => {
    const clash = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', port: 3000 });
    expect(isPortClash(clash)).toBe(true);
    expect(isPortClash(Object.assign(new Error('x'), { code: 'EACCES', port: 80 }))).toBe(false);
    expect(isPortClash('EADDRINUSE')).toBe(false);
  });
});
