/**
 * What a defense's evidence file is, told by its first bytes rather than by the name or the type
 * the client declared (docs/api.md "Infractions"): PDF (`%PDF-`), PNG (its 8-byte signature) or
 * JPEG (SOI marker `FF D8 FF`). Anything else is undefined, hence 415.
 */
import type { DefenseFileType } from '../../contracts/statuses';

const SIGNATURES: Array<{ type: DefenseFileType; bytes: readonly number[] }> = [
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
];

export function sniffDefenseFileType(content: Buffer): DefenseFileType | undefined {
  return SIGNATURES.find((s) => s.bytes.every((b, i) => content[i] === b))?.type;
}

/** A file name safe to keep and to send back in Content-Disposition: no path, no control characters. */
export function cleanFileName(name: string | null | undefined, fallback: string): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = [...base]
    .filter((c) => c !== '"' && c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim()
    .slice(0, 200);
  return clean === '' ? fallback : clean;
}
