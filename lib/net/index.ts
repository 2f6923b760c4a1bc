export { type AddressCategory, classifyAddress } from './address.js';
export { LookupUnavailableError, NetError, UnsafeUrlError } from './errors.js';
export { createUrlGuard, type Resolver, type UrlGuard, type UrlGuardOptions } from './url-guard.js';
