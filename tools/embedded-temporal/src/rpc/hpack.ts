/**
 * HPACK (RFC 7541), as much as a gRPC server needs: a complete decoder for request header blocks
 * (static and dynamic tables, size updates, Huffman-coded strings) and an encoder for the few
 * constant answers this server writes, as literals that never touch the peer's dynamic table
 * (so the peer's table-size setting never matters to us).
 *
 * Strings are decoded as latin1, so a string's length is its length in octets, which is what the
 * dynamic table's size accounting counts (RFC 7541 section 4.1); gRPC header values are ASCII.
 */

export class HpackError extends Error {}

/** The static table (RFC 7541 Appendix A), index 1 first. */
const STATIC: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

/**
 * Bit lengths of the Huffman codes of octets 0-255 and EOS (256), RFC 7541 Appendix B. The code
 * is canonical (codes ascend with (length, symbol)), so the lengths define every code.
 */
const HUFFMAN_BITS = (
  '13 23 28 28 28 28 28 28 28 24 30 28 28 30 28 28 28 28 28 28 28 28 30 28 28 28 28 28 28 28 28 28 ' +
  '6 10 10 12 13 6 8 11 10 10 8 11 8 6 6 6 5 5 5 6 6 6 6 6 6 6 7 8 15 6 12 10 ' +
  '13 6 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 8 7 8 13 19 13 14 6 ' +
  '15 5 6 5 6 5 6 6 6 5 7 7 6 6 6 5 6 7 6 5 5 6 7 7 7 7 7 15 11 14 13 28 ' +
  '20 22 20 20 22 22 22 23 22 23 23 23 23 23 24 23 24 24 22 23 24 23 23 23 23 21 22 23 22 23 23 24 ' +
  '22 21 20 22 22 23 23 21 23 22 22 24 21 22 23 23 21 21 22 21 23 22 23 23 20 22 22 22 23 22 22 23 ' +
  '26 26 20 19 22 23 22 25 26 26 26 27 27 26 24 25 19 21 26 27 27 26 27 24 21 21 26 26 28 27 27 27 ' +
  '20 24 20 21 22 21 21 23 22 22 25 25 24 24 26 23 26 27 26 26 27 27 27 27 27 28 27 27 27 27 27 26 30'
)
  .split(' ')
  .map(Number);

const EOS = 256;

/** The canonical codes of `HUFFMAN_BITS`: symbols sorted by (length, symbol) take ascending codes. */
export function huffmanCodes(): { code: number; bits: number }[] {
  const order = HUFFMAN_BITS.map((_, s) => s).sort((a, b) => HUFFMAN_BITS[a] - HUFFMAN_BITS[b] || a - b);
  const out: { code: number; bits: number }[] = [];
  let code = 0;
  let bits = HUFFMAN_BITS[order[0]];
  for (const s of order) {
    code *= 2 ** (HUFFMAN_BITS[s] - bits);
    bits = HUFFMAN_BITS[s];
    out[s] = { code, bits };
    code++;
  }
  return out;
}

/**
 * Decoding tree as a flat array: node n's children are at 2n (bit 0) and 2n+1 (bit 1); a child is
 * another node's index (> 0) or a leaf, -1 - symbol. 0 marks a missing child (never happens: the
 * code is complete).
 */
const TREE: Int32Array = (() => {
  const codes = huffmanCodes();
  const tree = new Int32Array(2 * 257 * 2);
  let nodes = 1;
  codes.forEach(({ code, bits }, sym) => {
    let n = 0;
    for (let i = bits - 1; i >= 0; i--) {
      const slot = 2 * n + (Math.floor(code / 2 ** i) & 1);
      if (i === 0) tree[slot] = -1 - sym;
      else {
        if (tree[slot] === 0) tree[slot] = nodes++;
        n = tree[slot];
      }
    }
  });
  return tree;
})();

function huffmanDecode(buf: Buffer, start: number, end: number): string {
  let out = '';
  let n = 0;
  // Bits read since the last symbol, and whether they were all ones (the only valid padding).
  let pending = 0;
  let ones = true;
  for (let i = start; i < end; i++) {
    const byte = buf[i];
    for (let b = 7; b >= 0; b--) {
      const bit = (byte >> b) & 1;
      const next = TREE[2 * n + bit];
      if (next < 0) {
        const sym = -1 - next;
        if (sym === EOS) throw new HpackError('Huffman string contains EOS');
        out += String.fromCharCode(sym);
        n = 0;
        pending = 0;
        ones = true;
      } else {
        n = next;
        pending++;
        if (bit === 0) ones = false;
      }
    }
  }
  if (pending > 7 || !ones) throw new HpackError('invalid Huffman padding');
  return out;
}

export type HeaderList = Record<string, string>;

/** One connection's request-side decoder: its dynamic table lives as long as the connection. */
export class HpackDecoder {
  /** Newest entry last; HPACK index 62 is the newest. */
  private readonly table: [string, string][] = [];
  private size = 0;
  private pos = 0;
  private buf: Buffer = Buffer.alloc(0);

  /** `maxSize` is our SETTINGS_HEADER_TABLE_SIZE (the peer may lower, never raise, the table). */
  constructor(private readonly maxSize = 4096) {
    this.limit = maxSize;
  }

  private limit: number;

  /** Decodes one complete header block; repeated names are joined with ", ". */
  decode(block: Buffer): HeaderList {
    this.buf = block;
    this.pos = 0;
    const out: HeaderList = {};
    const add = (name: string, value: string): void => {
      const prev = out[name];
      out[name] = prev === undefined ? value : `${prev}, ${value}`;
    };
    while (this.pos < block.length) {
      const b = block[this.pos];
      if (b & 0x80) {
        const [name, value] = this.entry(this.integer(7));
        add(name, value);
      } else if (b & 0x40) {
        const idx = this.integer(6);
        const name = idx === 0 ? this.string() : this.entry(idx)[0];
        const value = this.string();
        this.insert(name, value);
        add(name, value);
      } else if (b & 0x20) {
        const size = this.integer(5);
        if (size > this.maxSize) throw new HpackError(`dynamic table size update ${size} above ${this.maxSize}`);
        this.limit = size;
        this.evict(0);
      } else {
        // Literal without indexing (0000) or never indexed (0001): same layout, 4-bit prefix.
        const idx = this.integer(4);
        const name = idx === 0 ? this.string() : this.entry(idx)[0];
        add(name, this.string());
      }
    }
    this.buf = EMPTY;
    return out;
  }

  private entry(idx: number): readonly [string, string] {
    if (idx === 0) throw new HpackError('index 0');
    if (idx <= STATIC.length) return STATIC[idx - 1];
    const d = idx - STATIC.length - 1;
    if (d >= this.table.length) throw new HpackError(`index ${idx} beyond the tables`);
    return this.table[this.table.length - 1 - d];
  }

  private insert(name: string, value: string): void {
    const sz = 32 + name.length + value.length;
    if (sz > this.limit) {
      // An entry larger than the table empties it (RFC 7541 section 4.4).
      this.table.length = 0;
      this.size = 0;
      return;
    }
    this.evict(sz);
    this.table.push([name, value]);
    this.size += sz;
  }

  /** Drops the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    let drop = 0;
    while (this.size + room > this.limit && drop < this.table.length) {
      const [n, v] = this.table[drop++];
      this.size -= 32 + n.length + v.length;
    }
    if (drop > 0) this.table.splice(0, drop);
  }

  /** An integer with an N-bit prefix (RFC 7541 section 5.1). */
  private integer(prefixBits: number): number {
    const buf = this.buf;
    if (this.pos >= buf.length) throw new HpackError('truncated integer');
    const max = (1 << prefixBits) - 1;
    let v = buf[this.pos++] & max;
    if (v < max) return v;
    let shift = 0;
    for (;;) {
      if (this.pos >= buf.length) throw new HpackError('truncated integer');
      const b = buf[this.pos++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(b & 0x80)) break;
      if (shift > 28) throw new HpackError('integer too large');
    }
    return v;
  }

  /** A string literal (RFC 7541 section 5.2). */
  private string(): string {
    if (this.pos >= this.buf.length) throw new HpackError('truncated string');
    const huffman = (this.buf[this.pos] & 0x80) !== 0;
    const len = this.integer(7);
    const start = this.pos;
    const end = start + len;
    if (end > this.buf.length) throw new HpackError('truncated string');
    this.pos = end;
    return huffman ? huffmanDecode(this.buf, start, end) : this.buf.toString('latin1', start, end);
  }
}

const EMPTY = Buffer.alloc(0);

function encodeInteger(out: number[], firstByteBits: number, prefixBits: number, v: number): void {
  const max = (1 << prefixBits) - 1;
  if (v < max) {
    out.push(firstByteBits | v);
    return;
  }
  out.push(firstByteBits | max);
  v -= max;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function encodeString(out: number[], s: string): void {
  const bytes = Buffer.from(s, 'latin1');
  encodeInteger(out, 0, 7, bytes.length);
  for (const b of bytes) out.push(b);
}

/**
 * A header block of literals "without indexing" (RFC 7541 section 6.2.2), names taken from the
 * static table where it has them; ":status: 200" is the one fully indexed field (static 8).
 */
export function encodeHeaderBlock(headers: readonly (readonly [string, string])[]): Buffer {
  const out: number[] = [];
  for (const [name, value] of headers) {
    const full = STATIC.findIndex(([n, v]) => n === name && v === value);
    if (full >= 0 && value !== '') {
      encodeInteger(out, 0x80, 7, full + 1);
      continue;
    }
    const named = STATIC.findIndex(([n]) => n === name);
    if (named >= 0) encodeInteger(out, 0x00, 4, named + 1);
    else {
      out.push(0x00);
      encodeString(out, name);
    }
    encodeString(out, value);
  }
  return Buffer.from(out);
}
