export { AWS_MAX_ATTEMPTS, AWS_REQUEST_HANDLER, sendOptions } from './client.js';
export { isAwsUnavailable, isConditionFailed, isValidationError } from './errors.js';
