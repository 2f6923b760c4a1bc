export { type AddressCategory, classifyAddress } from './address.js';
export {
  assertAllowedAddress,
  type CheckedLookupOptions,
  checkedAddresses,
  normaliseHost,
  type Resolver,
} from './checked-lookup.js';
export { LookupUnavailableError, NetError, UnsafeUrlError } from './errors.js';
export { createUrlGuard, type UrlGuard, type UrlGuardOptions } from './url-guard.js';
