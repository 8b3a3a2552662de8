/**
 * A small seedable PRNG (mulberry32) and the few draws the simulator needs. The same seed gives
 * the same sequence on every platform, which is what makes a seeded simulator reproducible;
 * `Math.random` and `crypto.randomUUID` cannot be seeded.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by relative weight, e.g. `[['card', 35], ['fee', 15]]`. */
  weighted<T>(choices: ReadonlyArray<readonly [T, number]>): T;
  /** `length` lower-case hex digits. */
  hex(length: number): string;
  /** A UUID in version 4 layout, drawn from this generator. */
  uuid(): string;
}

/** mulberry32: 32 bits of state, good enough statistically for test data and very fast. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Derives an independent seed for one stream (program data, hold timeouts...), so that drawing
 * from one stream never shifts the values of another: a program's events stay the same whatever
 * the timing of requests or the activity of other programs.
 */
export function deriveSeed(seed: number, stream: number): number {
  // splitmix32-style mixing of the pair.
  let z = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * @example
 * const random = createRandom(42);
 * random.uuid(); // the same UUID on every run
 */
export function createRandom(seed: number): Random {
  const next = mulberry32(seed);
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  // Eight hex digits per draw: a draw carries 32 bits, and ids and addresses are the hot path.
  const hex = (length: number): string => {
    let out = '';
    while (out.length < length)
      out += Math.floor(next() * 4_294_967_296)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, length);
  };
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('Cannot pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    weighted: <T>(choices: ReadonlyArray<readonly [T, number]>): T => {
      const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
      let roll = next() * total;
      for (const [value, weight] of choices) {
        roll -= weight;
        if (roll < 0) return value;
      }
      const last = choices.at(-1);
      if (last === undefined) throw new RangeError('Cannot pick from an empty list');
      return last[0];
    },
    hex,
    uuid: () => {
      const digits = hex(32);
      // Version nibble 4 and variant bits 10xx, as crypto.randomUUID would produce.
      const variant = ((Number.parseInt(digits[16]!, 16) & 0x3) | 0x8).toString(16);
      return `${digits.slice(0, 8)}-${digits.slice(8, 12)}-4${digits.slice(13, 16)}-${variant}${digits.slice(17, 20)}-${digits.slice(20, 32)}`;
    },
  };
}
