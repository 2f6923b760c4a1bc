import type { LoggedRequest } from './types.js';

/** Keeps the last `capacity` requests in O(1) per request, so logging costs nothing under load. */
export class RequestLog {
  readonly #capacity: number;
  #items: LoggedRequest[] = [];
  #next = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  push(entry: LoggedRequest): void {
    if (this.#items.length < this.#capacity) this.#items.push(entry);
    else this.#items[this.#next] = entry;
    this.#next = (this.#next + 1) % this.#capacity;
  }

  /** Oldest first. */
  list(): LoggedRequest[] {
    if (this.#items.length < this.#capacity) return this.#items.map((e) => ({ ...e }));
    return [...this.#items.slice(this.#next), ...this.#items.slice(0, this.#next)].map((e) => ({ ...e }));
  }

  clear(): void {
    this.#items = [];
    this.#next = 0;
  }
}
