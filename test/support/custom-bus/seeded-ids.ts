/**
 * Identifiers for the stand-in's resources and events from a seeded generator, so a run with a fixed
 * seed answers byte for byte the same (the golden captures rely on it).
 */

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

export class SeededIds {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** The 25 lower-case alphanumerics that end a bus or subscriber ARN. */
  resourceId(): string {
    let id = '';
    for (let i = 0; i < 25; i++) id += ALPHANUMERIC[Math.floor(this.#next() * ALPHANUMERIC.length)];
    return id;
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.#next() * 16).toString(16));
    hex[12] = '4';
    hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
    const text = hex.join('');
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }

  /** mulberry32: small, fast, good enough for identifiers. */
  #next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }
}
