// Deep imports of undici (it has no exports map): the sender bundles only the Pool and its request helper, not
// fetch, WebSocket, HTTP/2, caching and mocks, which roughly halves its import time at cold start. Typed by the
// package's own declarations.
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';

  const PoolClass: typeof Pool;
  export default PoolClass;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';

  function request(this: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}
declare module 'undici/lib/core/errors.js' {
  import type { errors } from 'undici';

  const undiciErrors: typeof errors;
  export = undiciErrors;
}
// lib/webhooks: an Agent whose connector checks and pins the address it connects to (SSRF guard at connect time).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentClass: typeof Agent;
  export default AgentClass;
}
declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';

  const build: typeof buildConnector;
  export default build;
}
