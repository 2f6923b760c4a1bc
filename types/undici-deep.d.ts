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
