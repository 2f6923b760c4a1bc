import { randomFillSync } from 'node:crypto';

/**
 * Bytes of the OS's CSPRNG, drawn from a pool refilled a few KB at a time: one `getrandom` call per refill instead
 * of one per draw, where draws are small and frequent (a message id's characters, a request id). A byte is handed
 * out once; the pool is refilled, never reused.
 *
 * @example const pool = new RandomPool(); pool.bytes(10).toString('base64'); // e.g. 'JKJaXmPLvHcESHA='
 */
export class RandomPool {
  private readonly pool: Buffer;
  private offset: number;

  constructor(size = 4096) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`pool size must be a positive integer: ${size}`);
    this.pool = Buffer.alloc(size);
    this.offset = size;
  }

  /** `n` fresh bytes (a copy: the pool's memory is refilled later). */
  bytes(n: number): Buffer {
    if (!Number.isInteger(n) || n < 0 || n > this.pool.length) {
      throw new RangeError(`a draw is 0–${this.pool.length} whole bytes: ${n}`);
    }
    if (this.offset + n > this.pool.length) this.refill();
    const out = Buffer.from(this.pool.subarray(this.offset, this.offset + n));
    this.offset += n;
    return out;
  }

  /** One fresh byte, 0–255. */
  byte(): number {
    if (this.offset >= this.pool.length) this.refill();
    return this.pool[this.offset++] as number;
  }

  private refill(): void {
    randomFillSync(this.pool);
    this.offset = 0;
  }
}
