/** Defined by scripts/pack-cli.ts (an esbuild `define`) in the packed CLI only. */
declare const WECOM_GATEWAY_PACKED: boolean | undefined;

/**
 * True in the packed CLI (`npm run pack:cli`, run with `npx` anywhere), false in the checkout. The packed CLI has
 * no local stack beside it, so hints that say "run `npm start`" must say where.
 */
export const PACKED: boolean = typeof WECOM_GATEWAY_PACKED !== 'undefined' && WECOM_GATEWAY_PACKED === true;
