export { isAwsUnavailable, isConditionFailed } from './errors.js';
