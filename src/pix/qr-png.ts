/**
 * The synchronous half of QR rendering: text → QR matrix → 1-bit grayscale PNG → data URL.
 *
 * Why not `qrcode.toDataURL`: it spends ~11.6 ms per image here. Its cost is (a) trying all 8 masks and
 * scoring each (the QR spec's penalty rules), (b) a graph search for the optimal segment split, and
 * (c) drawing an RGBA bitmap and PNG-encoding it through pngjs. Any mask yields a valid, decodable
 * symbol — the penalty only nudges scan robustness on marginal printers/cameras — so we fix one; the
 * split comes from a linear-time equivalent (qr-segments.ts); and a QR is two colours, so a 1-bit
 * grayscale PNG carries it in 1/32 of the RGBA bytes. Together: a fraction of a millisecond
 * (bench/qr.ts).
 *
 * Pure and synchronous; qr.ts decides which thread runs it.
 */
import { deflateSync, crc32 } from 'node:zlib';
import QRCode from 'qrcode';
import { optimalSegments } from './qr-segments';

export interface QrRenderOptions {
  /** Pixels per module. 4 is qrcode's default, so our images are the size the baseline's were. */
  scale: number;
  /** Quiet zone in modules; the QR spec asks for 4. */
  margin: number;
}

export const DEFAULT_QR_OPTIONS: Readonly<QrRenderOptions> = { scale: 4, margin: 4 };

/**
 * Mask pattern used for every symbol. Pattern 0 ((row + col) % 2) is the checkerboard: it breaks up
 * long runs in any data, which is what the penalty scoring mostly rewards.
 */
const FIXED_MASK = 0;

export interface QrMatrix {
  /** Modules per side. */
  size: number;
  /** size × size, row-major, 1 = dark. */
  data: Uint8Array;
}

/**
 * Level M (15 % recovery) is qrcode's default and what payer apps expect from a screen or print.
 * qrcode still does the Reed-Solomon coding and module placement; we only choose mask and segments.
 */
export function qrMatrix(text: string): QrMatrix {
  if (text.length === 0) throw new RangeError('QR text must not be empty');
  const qr = QRCode.create(optimalSegments(text), { errorCorrectionLevel: 'M', maskPattern: FIXED_MASK });
  return { size: qr.modules.size, data: qr.modules.data };
}

/**
 * zlib level 3 instead of the default 6: the filtered rows are mostly zeros and repeats, so the
 * lower level finds nearly the same matches at about half the CPU (≈ 40 µs instead of 65–75 µs per
 * image here, 628 instead of 575 bytes of IDAT; docs/performance.md "Where a charge's time goes", cheaper pieces).
 */
const DEFLATE_LEVEL = 3;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'latin1');
  body.copy(out, 8);
  // The chunk CRC covers type and data; node:zlib has had crc32 since Node 20.15 (engines: >= 20.19).
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

/**
 * PNG, colour type 0 (grayscale), bit depth 1: bit 0 = black, 1 = white. Each module row becomes one
 * scanline, written with filter "None" once and then (scale − 1) times with filter "Up", whose bytes
 * are all zero — deflate then has almost nothing to do.
 */
export function encodeQrPng(matrix: QrMatrix, options: QrRenderOptions = DEFAULT_QR_OPTIONS): Buffer {
  const { size, data } = matrix;
  const { scale, margin } = options;
  if (!Number.isInteger(scale) || scale < 1 || !Number.isInteger(margin) || margin < 0) {
    throw new RangeError('scale must be an integer ≥ 1 and margin an integer ≥ 0');
  }
  const width = (size + 2 * margin) * scale;
  const stride = Math.ceil(width / 8);
  const rowLen = 1 + stride;
  const raw = Buffer.alloc(rowLen * width); // zero: filter "Up" rows need no further writing

  // A quiet-zone row: filter 0, all white (padding bits past the width are ignored by decoders).
  const white = Buffer.alloc(rowLen, 0xff);
  white[0] = 0;

  const line = Buffer.alloc(rowLen);
  let y = 0;
  for (let r = -margin; r < size + margin; r++) {
    let first: Buffer;
    if (r < 0 || r >= size) {
      first = white;
    } else {
      line.fill(0xff, 1);
      line[0] = 0;
      const base = r * size;
      for (let c = 0; c < size; c++) {
        if (data[base + c] === 0) continue;
        const x0 = (c + margin) * scale;
        for (let x = x0; x < x0 + scale; x++) {
          const i = 1 + (x >> 3);
          line[i] = (line[i] as number) & ~(0x80 >> (x & 7));
        }
      }
      first = line;
    }
    first.copy(raw, y * rowLen);
    y++;
    for (let k = 1; k < scale; k++, y++) raw[y * rowLen] = 2; // "Up": same as the row above
  }

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(width, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  ihdr[10] = 0; // deflate
  ihdr[11] = 0; // adaptive filtering (per-row filter byte)
  ihdr[12] = 0; // no interlace
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: DEFLATE_LEVEL })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const PNG_DATA_URL_PREFIX = 'data:image/png;base64,';

/** The whole synchronous path: BR Code text → `data:image/png;base64,…`. */
export function renderQrDataUrlSync(text: string, options: QrRenderOptions = DEFAULT_QR_OPTIONS): string {
  return PNG_DATA_URL_PREFIX + encodeQrPng(qrMatrix(text), options).toString('base64');
}
