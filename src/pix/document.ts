/**
 * Brazilian taxpayer documents: CPF (people, 11 digits) and CNPJ (companies, 14 digits).
 *
 * Input is digits only: the API contract says so, and accepting masks here ("123.456.789-09")
 * would let two spellings of one document reach the database. Callers strip nothing.
 */

const ONLY_DIGITS = /^\d+$/;

/** True when every character is the same digit: such numbers pass the check-digit maths but are not issued. */
function allEqual(digits: string): boolean {
  for (let i = 1; i < digits.length; i++) {
    if (digits.charCodeAt(i) !== digits.charCodeAt(0)) return false;
  }
  return true;
}

/** Modulo-11 check digit over `digits` with the given weights (both CPF and CNPJ use this rule). */
function mod11CheckDigit(digits: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) {
    sum += (digits.charCodeAt(i) - 48) * (weights[i] as number);
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

const CPF_W1 = [10, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CPF_W2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CNPJ_W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CNPJ_W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;

export function isValidCpf(value: string): boolean {
  if (value.length !== 11 || !ONLY_DIGITS.test(value) || allEqual(value)) return false;
  return (
    mod11CheckDigit(value, CPF_W1) === value.charCodeAt(9) - 48 &&
    mod11CheckDigit(value, CPF_W2) === value.charCodeAt(10) - 48
  );
}

export function isValidCnpj(value: string): boolean {
  if (value.length !== 14 || !ONLY_DIGITS.test(value) || allEqual(value)) return false;
  return (
    mod11CheckDigit(value, CNPJ_W1) === value.charCodeAt(12) - 48 &&
    mod11CheckDigit(value, CNPJ_W2) === value.charCodeAt(13) - 48
  );
}

export type DocumentType = 'CPF' | 'CNPJ';

/** The kind of document by length alone (11 → CPF, 14 → CNPJ), or null; says nothing about validity. */
export function documentType(value: string): DocumentType | null {
  if (!ONLY_DIGITS.test(value)) return null;
  if (value.length === 11) return 'CPF';
  if (value.length === 14) return 'CNPJ';
  return null;
}

/** A payer document: a valid CPF or a valid CNPJ, digits only (anything else is the charge API's 422). */
export function isValidDocument(value: string): boolean {
  switch (documentType(value)) {
    case 'CPF':
      return isValidCpf(value);
    case 'CNPJ':
      return isValidCnpj(value);
    default:
      return false;
  }
}
