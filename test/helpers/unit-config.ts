/** SPEC §3's minimal configuration, as a fresh mutable object for each test. */
export function minimalConfig() {
  return {
    apps: {
      ops: {
        corpId: 'ww0123456789abcdef',
        agentId: 1000002,
        secret: 'ops-app-secret-value',
        callback: { token: 'cb-token', encodingAESKey: 'jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C' },
        quota: {
          perMinute: 10000,
          perDay: 100000,
          perMemberPerMinute: 30,
          perMemberPerHour: 1000,
          safetyMargin: 0.2,
        },
      },
    },
    apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), apps: ['ops'] }],
  };
}
