export { fullJitterSeconds, type RetryPolicy } from './backoff.js';
export { deadlineSignal, runWithDeadline } from './deadline.js';
export { isPlainObject } from './objects.js';
export { parseOffsetTime } from './offset-time.js';
export { OnFirstUse } from './on-first-use.js';
export { RandomPool } from './random-pool.js';
export { KeyedQueue, SingleFlight } from './single-flight.js';
export { renderTemplate, templateProblem } from './template.js';
