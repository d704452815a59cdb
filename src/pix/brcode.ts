/**
 * EMV® QR Code "BR Code" for PIX (BCB's Manual do BR Code): builder, parser and CRC16.
 *
 * A payload is a run of TLV fields: two-digit id, two-digit length, value. Top level, in the order we
 * write them:
 *   00 payload format indicator "01"            01 point of initiation: 11 reusable, 12 single use
 *   26 merchant account: 00 GUI br.gov.bcb.pix, then 01 key (+ 02 info) or 25 location url (dynamic)
 *   52 MCC "0000"   53 currency "986" (BRL)     54 amount "d.dd" (optional)   58 country "BR"
 *   59 merchant name (≤ 25)   60 city (≤ 15)    62 additional data: 05 txid
 *   63 CRC16-CCITT (poly 0x1021, init 0xFFFF, no final xor) over everything up to and including "6304"
 *
 * Every failure is a BrCodeError with a code, so callers can map it (400/422/500) without sniffing
 * messages, and nothing else is ever thrown from here.
 */
import { randomBytes } from 'node:crypto';

export type BrCodeErrorCode =
  /** The builder was given a value it cannot encode (bad txid, empty name, amount out of range...). */
  | 'INVALID_INPUT'
  /** The payload is not a well-formed run of TLV fields. */
  | 'MALFORMED'
  /** Structurally fine but the CRC in field 63 does not match the content. */
  | 'BAD_CRC'
  /** A field required for a PIX BR Code is absent. */
  | 'MISSING_FIELD'
  /** A field is present but its value is not allowed. */
  | 'INVALID_FIELD';

export class BrCodeError extends Error {
  override readonly name = 'BrCodeError';
  constructor(
    readonly code: BrCodeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isBrCodeError(err: unknown): err is BrCodeError {
  return err instanceof BrCodeError;
}

// ---------------------------------------------------------------------------------------------------
// CRC16-CCITT (the "FALSE" variant: poly 0x1021, init 0xFFFF, not reflected, no final xor)

const CRC_TABLE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    table[i] = c;
  }
  return table;
})();

function crc16Bytes(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (let i = 0; i < bytes.length; i++) {
    crc = ((crc << 8) & 0xffff) ^ (CRC_TABLE[((crc >> 8) ^ (bytes[i] as number)) & 0xff] as number);
  }
  return crc;
}

/**
 * CRC of `data` as 4 uppercase hex digits, zero-padded. The bytes are the UTF-8 encoding: BR Codes we
 * build are ASCII (so bytes = characters), and third-party payloads with accents are checked the way
 * their (UTF-8) producers computed them.
 */
export function crc16(data: string): string {
  return crc16Bytes(Buffer.from(data, 'utf8')).toString(16).toUpperCase().padStart(4, '0');
}

// ---------------------------------------------------------------------------------------------------
// TLV

export interface Tlv {
  readonly id: string;
  readonly value: string;
}

/** One field. Lengths are counted in characters, as in the manual; a value holds at most 99. */
export function encodeField(id: string, value: string): string {
  if (!/^\d{2}$/.test(id)) throw new BrCodeError('INVALID_INPUT', `field id must be two digits, got "${id}"`);
  if (value.length < 1 || value.length > 99) {
    throw new BrCodeError('INVALID_INPUT', `field ${id} must be 1 to 99 characters, got ${value.length}`);
  }
  return id + (value.length < 10 ? '0' : '') + value.length + value;
}

/** Serialises fields in the order given (any 63 among them is dropped) and appends field 63, the CRC. */
export function encodeWithCrc(fields: readonly Tlv[]): string {
  let body = '';
  for (const f of fields) if (f.id !== '63') body += encodeField(f.id, f.value);
  body += '6304';
  return body + crc16(body);
}

/** Splits `data` into TLV fields; the whole string must be consumed exactly. */
export function decodeFields(data: string, where = 'payload'): Tlv[] {
  const out: Tlv[] = [];
  let i = 0;
  while (i < data.length) {
    const head = data.slice(i, i + 4);
    if (!/^\d{4}$/.test(head)) {
      throw new BrCodeError('MALFORMED', `${where}: expected a two-digit id and length at offset ${i}`);
    }
    const id = head.slice(0, 2);
    const len = Number(head.slice(2));
    if (len === 0) throw new BrCodeError('MALFORMED', `${where}: field ${id} at offset ${i} is empty`);
    if (i + 4 + len > data.length) {
      throw new BrCodeError('MALFORMED', `${where}: field ${id} at offset ${i} runs past the end`);
    }
    out.push({ id, value: data.slice(i + 4, i + 4 + len) });
    i += 4 + len;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Values

export const PIX_GUI = 'br.gov.bcb.pix';
/** txid placeholder of a BR Code with no txid (static, reusable). */
export const NO_TXID = '***';
/** BCB API Pix rule for a cob's txid. */
const TXID = /^[a-zA-Z0-9]{26,35}$/;
/** The amount field holds at most 13 characters ("9999999999.99"), as the BCB API's `\d{1,10}\.\d{2}`. */
export const MAX_AMOUNT_CENTS = 999_999_999_999;
export const MERCHANT_NAME_MAX = 25;
export const MERCHANT_CITY_MAX = 15;

/** A cob txid per BCB rules: 26 to 35 characters from [a-zA-Z0-9]. */
export function isValidTxid(txid: string): boolean {
  return TXID.test(txid);
}

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh txid: 32 characters from [A-Za-z0-9] drawn from the CSPRNG (≈ 190 bits). */
export function newTxid(): string {
  let out = '';
  while (out.length < 32) {
    const bytes = randomBytes(48);
    for (let i = 0; i < bytes.length && out.length < 32; i++) {
      const b = bytes[i] as number;
      // 248 = 4 × 62: dropping the top 8 byte values keeps every character equally likely.
      if (b < 248) out += ALPHANUM[b % 62];
    }
  }
  return out;
}

/** Integer cents → "d.dd" (1 → "0.01", 100 → "1.00", 123456 → "1234.56"); no floating point involved. */
export function formatAmount(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 1 || cents > MAX_AMOUNT_CENTS) {
    throw new BrCodeError('INVALID_INPUT', `amount must be an integer number of cents from 1 to ${MAX_AMOUNT_CENTS}`);
  }
  const units = Math.floor(cents / 100);
  const rest = cents % 100;
  return `${units}.${rest < 10 ? '0' : ''}${rest}`;
}

/**
 * "d.dd" → integer cents. Also reads "10" and "10.5", which other generators emit, since the EMV
 * spec only bounds the length; never goes through a float.
 */
export function parseAmount(value: string): number {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value);
  if (!m || value.length > 13) {
    throw new BrCodeError('INVALID_FIELD', `field 54 (amount) is not a decimal amount: "${value}"`);
  }
  const units = m[1] as string;
  const frac = (m[2] ?? '').padEnd(2, '0');
  const cents = Number(units) * 100 + Number(frac);
  if (cents < 1) throw new BrCodeError('INVALID_FIELD', 'field 54 (amount) must be greater than zero');
  return cents;
}

// Letters that Unicode does not decompose into base + accent but that have a usual ASCII spelling.
const EXTRA_FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ł: 'l',
  Ł: 'L',
  þ: 'th',
  Þ: 'TH',
};

/**
 * Folds text to printable ASCII for fields 59/60: accents dropped ("São Paulo" → "Sao Paulo"), a few
 * ligatures spelled out, anything else outside ASCII removed, whitespace runs collapsed; case kept.
 * Payer apps print these fields, and some of them mangle non-ASCII, hence the folding.
 */
export function foldToAscii(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[ßæÆœŒøØđĐłŁþÞ]/g, (c) => EXTRA_FOLDS[c] ?? '')
    .replace(/\s/g, ' ')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** Fold, then cut to `max` characters (trimming a space left at the cut). */
export function foldAndTruncate(text: string, max: number): string {
  return foldToAscii(text).slice(0, max).trimEnd();
}

// ---------------------------------------------------------------------------------------------------
// Builder

interface BrCodeCommon {
  /** Folded to ASCII and cut to 25 characters. */
  merchantName: string;
  /** Folded to ASCII and cut to 15 characters. */
  merchantCity: string;
  /** Integer cents, 1 to MAX_AMOUNT_CENTS; absent lets the payer type the amount. */
  amountCents?: number;
  /** 26 to 35 [a-zA-Z0-9], or "***" (the default) for a reusable code without txid. */
  txid?: string;
  /** Field 01: "12" single use, "11" reusable; omitted when absent. */
  initiationMethod?: '11' | '12';
}

export type BrCodeInput = BrCodeCommon &
  (
    | {
        /** The receiver's PIX key (field 26-01), as registered. */
        key: string;
        /** Free text for the payer (26-02), folded to ASCII and cut to fit field 26's 99 characters. */
        additionalInfo?: string;
        url?: undefined;
      }
    | {
        /** Dynamic code: the PSP's payload location without scheme (field 26-25). */
        url: string;
        key?: undefined;
        additionalInfo?: undefined;
      }
  );

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

function requireText(name: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max || !PRINTABLE_ASCII.test(value)) {
    throw new BrCodeError('INVALID_INPUT', `${name} must be 1 to ${max} printable ASCII characters`);
  }
  return value;
}

/** Builds the copy-and-paste payload; throws BrCodeError('INVALID_INPUT') for anything it cannot encode. */
export function buildBrCode(input: BrCodeInput): string {
  const gui = encodeField('00', PIX_GUI);
  let account: string;
  if (input.key !== undefined) {
    if (input.url !== undefined) throw new BrCodeError('INVALID_INPUT', 'give either key or url, not both');
    account = gui + encodeField('01', requireText('key', input.key, 77));
    if (input.additionalInfo !== undefined) {
      // Whatever room is left in field 26 after the key, minus the 4 characters of 02's id and length.
      const room = 99 - account.length - 4;
      const info = room > 0 ? foldAndTruncate(input.additionalInfo, room) : '';
      if (info.length > 0) account += encodeField('02', info);
    }
  } else if (input.url !== undefined) {
    account = gui + encodeField('25', requireText('url', input.url, 77));
  } else {
    throw new BrCodeError('INVALID_INPUT', 'a PIX key or a location url is required');
  }

  const txid = input.txid ?? NO_TXID;
  if (txid !== NO_TXID && !isValidTxid(txid)) {
    throw new BrCodeError('INVALID_INPUT', 'txid must be 26 to 35 characters from [a-zA-Z0-9]');
  }
  if (input.initiationMethod !== undefined && input.initiationMethod !== '11' && input.initiationMethod !== '12') {
    throw new BrCodeError('INVALID_INPUT', 'initiationMethod must be "11" or "12"');
  }
  const name = foldAndTruncate(String(input.merchantName), MERCHANT_NAME_MAX);
  if (name.length === 0) throw new BrCodeError('INVALID_INPUT', 'merchantName is empty once folded to ASCII');
  const city = foldAndTruncate(String(input.merchantCity), MERCHANT_CITY_MAX);
  if (city.length === 0) throw new BrCodeError('INVALID_INPUT', 'merchantCity is empty once folded to ASCII');

  const fields: Tlv[] = [{ id: '00', value: '01' }];
  if (input.initiationMethod !== undefined) fields.push({ id: '01', value: input.initiationMethod });
  fields.push({ id: '26', value: account }, { id: '52', value: '0000' }, { id: '53', value: '986' });
  if (input.amountCents !== undefined) fields.push({ id: '54', value: formatAmount(input.amountCents) });
  fields.push(
    { id: '58', value: 'BR' },
    { id: '59', value: name },
    { id: '60', value: city },
    { id: '62', value: encodeField('05', txid) },
  );
  return encodeWithCrc(fields);
}

// ---------------------------------------------------------------------------------------------------
// Parser

export interface BrCode {
  /** Field 01 when present. */
  initiationMethod?: '11' | '12';
  /** Field 26-00 as written (the manual's examples use both cases). */
  gui: string;
  /** 26-01, static codes. */
  key?: string;
  /** 26-02. */
  additionalInfo?: string;
  /** 26-25, dynamic codes. */
  url?: string;
  merchantCategoryCode: string;
  currency: string;
  amountCents?: number;
  countryCode: string;
  merchantName: string;
  merchantCity: string;
  /** 61 when present. */
  postalCode?: string;
  /** 62-05 when present: a cob txid, or "***". */
  txid?: string;
  /** 63 as written (verified). */
  crc: string;
  /** Every top-level field in payload order, including ones this type does not name. */
  fields: readonly Tlv[];
}

function fieldMap(fields: readonly Tlv[], where: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const f of fields) {
    if (map.has(f.id)) throw new BrCodeError('MALFORMED', `${where}: field ${f.id} appears twice`);
    map.set(f.id, f.value);
  }
  return map;
}

function required(map: Map<string, string>, id: string, label: string): string {
  const v = map.get(id);
  if (v === undefined) throw new BrCodeError('MISSING_FIELD', `field ${id} (${label}) is missing`);
  return v;
}

/**
 * Parses and verifies a PIX BR Code. Throws only BrCodeError: MALFORMED (not TLV, field 00 not first,
 * field 63 not last), BAD_CRC, MISSING_FIELD or INVALID_FIELD (not a PIX code, currency not BRL...).
 */
export function parseBrCode(payload: unknown): BrCode {
  try {
    return parseChecked(payload);
  } catch (err) {
    if (err instanceof BrCodeError) throw err;
    // Not reachable by design; keeps the promise "only BrCodeError" even if this module has a bug.
    throw new BrCodeError('MALFORMED', `unparseable payload: ${String(err)}`);
  }
}

function parseChecked(payload: unknown): BrCode {
  if (typeof payload !== 'string') throw new BrCodeError('MALFORMED', 'payload must be a string');
  if (payload.length < 12) throw new BrCodeError('MALFORMED', 'payload is too short to be a BR Code');
  const fields = decodeFields(payload);
  const last = checkFrame(payload, fields);

  const map = fieldMap(fields, 'payload');
  const account = fieldMap(decodeFields(required(map, '26', 'merchant account'), 'field 26'), 'field 26');
  const gui = required(account, '00', 'GUI');
  if (gui.toLowerCase() !== PIX_GUI) throw new BrCodeError('INVALID_FIELD', `field 26-00 is "${gui}", not ${PIX_GUI}`);
  const key = account.get('01');
  const url = account.get('25');
  if (key === undefined && url === undefined) {
    throw new BrCodeError('MISSING_FIELD', 'field 26 has neither a key (01) nor a url (25)');
  }

  const initiation = map.get('01');
  if (initiation !== undefined && initiation !== '11' && initiation !== '12') {
    throw new BrCodeError('INVALID_FIELD', `field 01 must be "11" or "12", got "${initiation}"`);
  }
  const mcc = required(map, '52', 'merchant category code');
  if (!/^\d{4}$/.test(mcc)) throw new BrCodeError('INVALID_FIELD', 'field 52 must be 4 digits');
  const currency = required(map, '53', 'currency');
  if (currency !== '986') throw new BrCodeError('INVALID_FIELD', `field 53 must be 986 (BRL), got "${currency}"`);
  const country = required(map, '58', 'country');
  if (country !== 'BR') throw new BrCodeError('INVALID_FIELD', `field 58 must be BR, got "${country}"`);
  const name = required(map, '59', 'merchant name');
  if (name.length > MERCHANT_NAME_MAX) throw new BrCodeError('INVALID_FIELD', 'field 59 exceeds 25 characters');
  const city = required(map, '60', 'merchant city');
  if (city.length > MERCHANT_CITY_MAX) throw new BrCodeError('INVALID_FIELD', 'field 60 exceeds 15 characters');
  const amount = map.get('54');

  const txid = txidOf(map);

  const out: BrCode = {
    gui,
    merchantCategoryCode: mcc,
    currency,
    countryCode: country,
    merchantName: name,
    merchantCity: city,
    crc: last.value,
    fields,
  };
  if (initiation !== undefined) out.initiationMethod = initiation;
  if (key !== undefined) out.key = key;
  const info = account.get('02');
  if (info !== undefined) out.additionalInfo = info;
  if (url !== undefined) out.url = url;
  if (amount !== undefined) out.amountCents = parseAmount(amount);
  const postal = map.get('61');
  if (postal !== undefined) out.postalCode = postal;
  if (txid !== undefined) out.txid = txid;
  return out;
}

/** Field 00 first, field 63 last, and the CRC of everything before it. */
function checkFrame(payload: string, fields: readonly Tlv[]): Tlv {
  const first = fields[0];
  const last = fields[fields.length - 1];
  if (!first || first.id !== '00' || first.value !== '01') {
    throw new BrCodeError('MALFORMED', 'payload must start with field 00 = "01"');
  }
  if (!last || last.id !== '63' || last.value.length !== 4) {
    throw new BrCodeError('MALFORMED', 'payload must end with field 63, a 4-character CRC');
  }
  if (!/^[0-9A-Fa-f]{4}$/.test(last.value)) throw new BrCodeError('MALFORMED', 'field 63 (CRC) must be 4 hex digits');
  const expected = crc16(payload.slice(0, -4));
  if (last.value.toUpperCase() !== expected) {
    throw new BrCodeError('BAD_CRC', `CRC mismatch: payload says ${last.value}, content gives ${expected}`);
  }
  return last;
}

/** Field 62-05, the txid, when the payload has one. */
function txidOf(map: Map<string, string>): string | undefined {
  const additional = map.get('62');
  if (additional === undefined) return undefined;
  const txid = fieldMap(decodeFields(additional, 'field 62'), 'field 62').get('05');
  // The BCB API allows 1 to 35 alphanumerics (static codes from other generators use short ones).
  if (txid !== undefined && txid !== NO_TXID && !/^[a-zA-Z0-9]{1,35}$/.test(txid)) {
    throw new BrCodeError('INVALID_FIELD', 'field 62-05 (txid) must be "***" or 1 to 35 characters from [a-zA-Z0-9]');
  }
  return txid;
}

export type BrCodeParseResult = { ok: true; brCode: BrCode } | { ok: false; error: BrCodeError };

/** parseBrCode without exceptions, for validation paths. */
export function tryParseBrCode(payload: unknown): BrCodeParseResult {
  try {
    return { ok: true, brCode: parseBrCode(payload) };
  } catch (err) {
    return { ok: false, error: err instanceof BrCodeError ? err : new BrCodeError('MALFORMED', String(err)) };
  }
}
