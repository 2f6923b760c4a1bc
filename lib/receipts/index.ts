export { CallbackAppNotFoundError } from './errors.js';
export { type CallbackDeps, createVerifiers, receiveCallback, verifyCallbackUrl } from './service.js';
