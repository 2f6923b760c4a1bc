import { decodeTime, ulid } from 'ulid';
import { RandomPool } from '#lib/util/random-pool.js';

export const MESSAGE_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

/** When a message id was made (ULIDs carry it); undefined for ids of another shape. */
export function idTime(messageId: string): number | undefined {
  if (!MESSAGE_ID.test(messageId)) return undefined;
  try {
    return decodeTime(messageId.slice(4));
  } catch {
    return undefined;
  }
}

/**
 * The PRNG ulid uses by default asks the OS for one byte per character (16 `getRandomValues` calls per id, a
 * visible share of ingest's CPU); this one draws from a pool of the same CSPRNG. A byte ÷ 256 maps onto ulid's 32
 * characters without bias (256 is a multiple of 32).
 */
const pool = new RandomPool();
export const pooledRandom = (): number => pool.byte() / 256;

export const newMessageId = (): string => `msg_${ulid(undefined, pooledRandom)}`;
