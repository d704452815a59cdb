/**
 * PIX key formats (docs/api.md "Withdrawals") and the charge customer's phone.
 *
 * Formats only: whether a key exists in the DICT is the acquirer's business. Keys are checked as
 * given, with no trimming or case folding, so what is stored is exactly what was validated.
 */
import { isValidCnpj, isValidCpf } from './document';

export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'CHAVE_ALEATORIA'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

export function isPixKeyType(value: string): value is PixKeyType {
  return (PIX_KEY_TYPES as readonly string[]).includes(value);
}

/** The DICT's limit for an e-mail key; also the longest key that fits field 26-01 of a BR Code. */
export const EMAIL_KEY_MAX_LENGTH = 77;

// One dot-atom local part (RFC 5322 atext, no leading, trailing or doubled dots, ≤ 64 chars) and a
// host name of at least two labels ending in an alphabetic TLD. Quoted local parts and IP-literal
// domains are legal in RFC 5322 but are not used as PIX keys, so they are refused.
const EMAIL =
  /^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

// E.164: '+', a country code that does not start with 0, at most 15 digits in all.
const E164 = /^\+[1-9]\d{1,14}$/;

// Random key (EVP): a UUID in its canonical 8-4-4-4-12 hyphenated form. Either case is accepted
// because UUIDs are case-insensitive; the DICT issues them in lower case.
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isValidEmail(value: string): boolean {
  return value.length <= EMAIL_KEY_MAX_LENGTH && EMAIL.test(value);
}

export function isValidE164Phone(value: string): boolean {
  return E164.test(value);
}

export function isValidUuid(value: string): boolean {
  return UUID.test(value);
}

/** The charge customer's phone: 10 to 15 digits, digits only, area code included. */
export function isValidCustomerPhone(value: string): boolean {
  return /^\d{10,15}$/.test(value);
}

export type PixKeyCheck = { ok: true } | { ok: false; reason: string };

const OK: PixKeyCheck = { ok: true };
const fail = (reason: string): PixKeyCheck => ({ ok: false, reason });

/** Whether `key` is well-formed for `type`; the reason is a sentence fit for a 400 `{message}`. */
export function validatePixKey(type: PixKeyType, key: string): PixKeyCheck {
  switch (type) {
    case 'CPF':
      if (!/^\d{11}$/.test(key)) return fail('PIX key of type CPF must be 11 digits');
      return isValidCpf(key) ? OK : fail('PIX key of type CPF is not a valid CPF');
    case 'CNPJ':
      if (!/^\d{14}$/.test(key)) return fail('PIX key of type CNPJ must be 14 digits');
      return isValidCnpj(key) ? OK : fail('PIX key of type CNPJ is not a valid CNPJ');
    case 'EMAIL':
      if (key.length > EMAIL_KEY_MAX_LENGTH) {
        return fail(`PIX key of type EMAIL must be at most ${EMAIL_KEY_MAX_LENGTH} characters`);
      }
      return EMAIL.test(key) ? OK : fail('PIX key of type EMAIL is not a valid e-mail address');
    case 'PHONE':
      return E164.test(key)
        ? OK
        : fail('PIX key of type PHONE must be in E.164 format: + country code and digits, e.g. +5511987654321');
    case 'CHAVE_ALEATORIA':
      return UUID.test(key) ? OK : fail('PIX key of type CHAVE_ALEATORIA must be a UUID (36 characters with hyphens)');
    default: {
      // Unreachable for typed callers; guards values that came from JSON without a type check.
      const unknown: never = type;
      return fail(`unknown PIX key type ${String(unknown)}`);
    }
  }
}
