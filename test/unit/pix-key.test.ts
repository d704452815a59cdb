import assert from 'node:assert/strict';
import {
  isPixKeyType,
  isValidCustomerPhone,
  PIX_KEY_TYPES,
  validatePixKey,
  type PixKeyType,
} from '../../src/pix/pix-key';

function ok(type: PixKeyType, key: string): void {
  assert.deepEqual(validatePixKey(type, key), { ok: true }, `${type} ${key}`);
}

function bad(type: PixKeyType, key: string, reason: RegExp): void {
  const r = validatePixKey(type, key);
  assert.equal(r.ok, false, `${type} ${key} should be invalid`);
  if (!r.ok) assert.match(r.reason, reason);
}

describe('pix/pix-key', () => {
  it('knows the five key types of the data model', () => {
    assert.deepEqual([...PIX_KEY_TYPES], ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'CHAVE_ALEATORIA']);
    assert.equal(isPixKeyType('EMAIL'), true);
    assert.equal(isPixKeyType('EVP'), false);
    assert.equal(isPixKeyType('email'), false);
  });

  describe('CPF', () => {
    it('valid', () => ok('CPF', '52998224725'));
    it('wrong check digit', () => bad('CPF', '52998224726', /not a valid CPF/));
    it('wrong length', () => {
      bad('CPF', '5299822472', /11 digits/);
      bad('CPF', '529982247250', /11 digits/);
    });
    it('all-equal', () => bad('CPF', '11111111111', /not a valid CPF/));
    it('masked or non-digit', () => bad('CPF', '529.982.247-25', /11 digits/));
    it('a valid CNPJ is not a CPF key', () => bad('CPF', '11222333000181', /11 digits/));
  });

  describe('CNPJ', () => {
    it('valid', () => ok('CNPJ', '11222333000181'));
    it('wrong check digit', () => bad('CNPJ', '11222333000182', /not a valid CNPJ/));
    it('wrong length', () => bad('CNPJ', '1122233300018', /14 digits/));
    it('all-equal', () => bad('CNPJ', '00000000000000', /not a valid CNPJ/));
    it('masked', () => bad('CNPJ', '11.222.333/0001-81', /14 digits/));
  });

  describe('EMAIL', () => {
    it('valid addresses', () => {
      for (const e of [
        'fulano@example.com',
        'a.b+c_d-e@sub.example.com.br',
        'x@y.io',
        "o'neil@example.org",
        'UPPER@EXAMPLE.COM',
      ]) {
        ok('EMAIL', e);
      }
    });
    it('77 characters is the limit, 78 is refused', () => {
      ok('EMAIL', 'a'.repeat(64) + '@example.com'); // local part at the RFC maximum of 64
      const long77 = 'a'.repeat(60) + '@' + 'b'.repeat(12) + '.com'; // 60 + 1 + 12 + 4 = 77
      assert.equal(long77.length, 77);
      ok('EMAIL', long77);
      const long78 = 'a'.repeat(61) + '@' + 'b'.repeat(12) + '.com';
      assert.equal(long78.length, 78);
      bad('EMAIL', long78, /at most 77/);
    });
    it('local part over 64 characters', () => bad('EMAIL', 'a'.repeat(65) + '@ex.com', /not a valid e-mail/));
    it('malformed addresses', () => {
      for (const e of [
        '',
        'plain',
        '@example.com',
        'user@',
        'user@example',
        'user@@example.com',
        'us er@example.com',
        '.user@example.com',
        'user.@example.com',
        'us..er@example.com',
        'user@-example.com',
        'user@example-.com',
        'user@example..com',
        'user@example.c',
        'user@example.123',
        'usér@example.com',
        ' user@example.com',
        'user@example.com ',
        'user@[127.0.0.1]',
      ]) {
        bad('EMAIL', e, /not a valid e-mail/);
      }
    });
  });

  describe('PHONE (E.164)', () => {
    it('valid', () => {
      ok('PHONE', '+5511987654321');
      ok('PHONE', '+551133334444');
      ok('PHONE', '+14155552671');
      ok('PHONE', '+123456789012345'); // 15 digits, the E.164 maximum
    });
    it('invalid', () => {
      for (const p of [
        '5511987654321',
        '+',
        '+0511987654321',
        '+1234567890123456',
        '+55 11 98765-4321',
        '+55(11)987654321',
        '+55119876543a1',
        '',
      ]) {
        bad('PHONE', p, /E\.164/);
      }
    });
  });

  describe('CHAVE_ALEATORIA (UUID)', () => {
    it('valid', () => {
      ok('CHAVE_ALEATORIA', '123e4567-e12b-12d1-a456-426655440000');
      ok('CHAVE_ALEATORIA', '5F84A4C5-C5CB-4599-9F13-7EB4D419DACC');
    });
    it('invalid', () => {
      for (const k of [
        '123e4567e12b12d1a456426655440000', // 32, no hyphens
        '123e4567-e12b-12d1-a456-42665544000', // 35
        '123e4567-e12b-12d1-a456-4266554400000', // 37
        '123e4567-e12b-12d1-a456_426655440000',
        '123g4567-e12b-12d1-a456-426655440000',
        '{123e4567-e12b-12d1-a456-426655440000}',
        '',
      ]) {
        bad('CHAVE_ALEATORIA', k, /UUID/);
      }
    });
  });

  it('an unknown type from untyped input is refused, not thrown', () => {
    const r = validatePixKey('IBAN' as PixKeyType, 'x');
    assert.equal(r.ok, false);
  });

  describe('customer phone (charges)', () => {
    it('10 and 15 digits are accepted', () => {
      assert.equal(isValidCustomerPhone('1133334444'), true);
      assert.equal(isValidCustomerPhone('5511987654321'), true);
      assert.equal(isValidCustomerPhone('123456789012345'), true);
    });
    it('9 and 16 digits are refused', () => {
      assert.equal(isValidCustomerPhone('113333444'), false);
      assert.equal(isValidCustomerPhone('1234567890123456'), false);
    });
    it('non-digits are refused', () => {
      for (const p of ['+5511987654321', '(11) 98765-4321', '11 987654321', '11987654a21', '']) {
        assert.equal(isValidCustomerPhone(p), false, p);
      }
    });
  });
});
