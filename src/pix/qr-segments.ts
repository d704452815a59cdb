/**
 * Optimal split of a text into QR segments (numeric / alphanumeric / byte), in linear time.
 *
 * Why our own: `qrcode.create(text)` finds the optimal split too, but through a graph search that
 * costs ~0.4 ms on a BR Code — more than the rest of our rendering put together — and plain byte
 * mode is often one QR version (4 modules a side) larger, i.e. smaller modules on the payer's screen.
 * BR Codes are full of digit runs ("5204000053039865802BR", amounts, CNPJ keys) and often of
 * upper-case runs (names, "***"), so the split matters.
 *
 * This is the dynamic programme of Nayuki's QR Code generator ("optimal segment mode switching"):
 * for each character, the cheapest bit cost of ending in each mode, costs scaled by 6 so that
 * numeric (10 bits / 3 digits) and alphanumeric (11 bits / 2 chars) stay integers.
 */

export type QrSegment =
  { mode: 'numeric'; data: string } | { mode: 'alphanumeric'; data: string } | { mode: 'byte'; data: Buffer };

type Mode = 0 | 1 | 2; // byte, alphanumeric, numeric
const MODES: readonly Mode[] = [0, 1, 2];

/** Scaled (× 6) bits per character in each mode. */
const CHAR_COST = [48, 33, 20] as const;

/** Character-count field widths by mode for versions 1–9, 10–26, 27–40. */
const COUNT_BITS: readonly (readonly [number, number, number])[] = [
  [8, 9, 10],
  [16, 11, 12],
  [16, 13, 14],
];

/** Data capacity in bits at error correction level M for versions 9 and 26 (class boundaries). */
const CAPACITY_M_BITS = [182 * 8, 1062 * 8] as const;

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';

/** For each ASCII code: 2 if a digit, 1 if alphanumeric, 0 otherwise (byte mode only). */
const ASCII_CLASS = (() => {
  const t = new Uint8Array(128);
  for (const ch of ALNUM) t[ch.charCodeAt(0)] = ch >= '0' && ch <= '9' ? 2 : 1;
  return t;
})();

/** Whether `ch` can be written in `mode` (every mode writes a subset of the one below it). */
function canEncode(mode: Mode, ch: string): boolean {
  if (mode === 0) return true;
  const c = ch.charCodeAt(0);
  return ch.length === 1 && c < 128 && (ASCII_CLASS[c] as number) >= mode;
}

/** Unreachable state (cheaper than Infinity in typed arrays, far above any real cost). */
const NONE = 0x3fffffff;

/**
 * Best mode of every character for one version class, and the total bit count. Runs once or twice
 * per charge (docs/performance.md "Where a charge's time goes"), so it works in typed arrays: no arrays per
 * character.
 */
function plan(chars: readonly string[], versionClass: 0 | 1 | 2): { modes: Mode[]; bits: number } {
  const counts = COUNT_BITS[versionClass] as readonly [number, number, number];
  const head = Int32Array.from(MODES, (m) => (4 + counts[m]) * 6);
  let prev = Int32Array.from(head);
  let cur = new Int32Array(3);
  // from[3 i + m]: the mode character i was in, given that the state after i is m (-1: none).
  const from = new Int8Array(3 * chars.length);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    const bytes = utf8Length(ch);
    const o = 3 * i;
    for (let m = 0; m < 3; m++) {
      if (canEncode(m as Mode, ch)) {
        cur[m] = (prev[m] as number) + (m === 0 ? CHAR_COST[0] * bytes : CHAR_COST[m as Mode]);
        from[o + m] = m;
      } else {
        cur[m] = NONE;
        from[o + m] = -1;
      }
    }
    // Switching: end the segment in mode k here (rounded up to whole bits) and open one in mode j.
    for (let j = 0; j < 3; j++) {
      for (let k = 0; k < 3; k++) {
        if (from[o + k] === -1) continue;
        const cost = Math.ceil((cur[k] as number) / 6) * 6 + (head[j] as number);
        if (from[o + j] === -1 || cost < (cur[j] as number)) {
          cur[j] = cost;
          from[o + j] = k;
        }
      }
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
  let state: Mode = 0;
  for (const m of MODES) if ((prev[m] as number) < (prev[state] as number)) state = m;
  const bits = Math.ceil((prev[state] as number) / 6);
  const modes: Mode[] = new Array<Mode>(chars.length);
  for (let i = chars.length - 1; i >= 0; i--) {
    state = from[3 * i + state] as Mode;
    modes[i] = state;
  }
  return { modes, bits };
}

/** UTF-8 length of one code point (BR Codes are ASCII, but nothing here depends on it). */
function utf8Length(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Segments for `text` at error correction level M. The count-field widths depend on the version,
 * which depends on the split; plan for small versions first and move up a class only if the result
 * does not fit (a split that is optimal for its class is then optimal overall).
 */
export function optimalSegments(text: string): QrSegment[] {
  const chars = Array.from(text);
  let best = plan(chars, 0);
  if (best.bits > CAPACITY_M_BITS[0]) {
    best = plan(chars, 1);
    if (best.bits > CAPACITY_M_BITS[1]) best = plan(chars, 2);
  }
  const out: QrSegment[] = [];
  let start = 0;
  for (let i = 1; i <= chars.length; i++) {
    if (i < chars.length && best.modes[i] === best.modes[start]) continue;
    const data = chars.slice(start, i).join('');
    const mode = best.modes[start];
    if (mode === 2) out.push({ mode: 'numeric', data });
    else if (mode === 1) out.push({ mode: 'alphanumeric', data });
    else out.push({ mode: 'byte', data: Buffer.from(data, 'utf8') });
    start = i;
  }
  return out;
}
