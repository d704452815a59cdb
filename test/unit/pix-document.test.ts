import assert from 'node:assert/strict';
import { documentType, isValidCnpj, isValidCpf, isValidDocument } from '../../src/pix/document';

// Widely published sample documents with correct check digits (none is all-equal).
const CPF_OK = ['52998224725', '11144477735', '12345678909', '39053344705'];
const CNPJ_OK = ['11222333000181', '12345678000195', '11444777000161', '00000000000191'];

describe('pix/document', () => {
  describe('isValidCpf', () => {
    for (const cpf of CPF_OK) it(`accepts ${cpf}`, () => assert.equal(isValidCpf(cpf), true));

    it('rejects a wrong first check digit', () => assert.equal(isValidCpf('52998224715'), false));
    it('rejects a wrong second check digit', () => assert.equal(isValidCpf('52998224726'), false));
    it('rejects every single-digit change of a valid CPF', () => {
      for (let i = 0; i < 11; i++) {
        for (let d = 0; d <= 9; d++) {
          const digits = CPF_OK[0] as string;
          if (String(d) === digits[i]) continue;
          const changed = digits.slice(0, i) + d + digits.slice(i + 1);
          assert.equal(isValidCpf(changed), false, changed);
        }
      }
    });
    it('rejects 10 and 12 digits', () => {
      assert.equal(isValidCpf('5299822472'), false);
      assert.equal(isValidCpf('529982247250'), false);
    });
    it('rejects all-equal digits, whose check digits are otherwise right', () => {
      for (let d = 0; d <= 9; d++) assert.equal(isValidCpf(String(d).repeat(11)), false);
    });
    it('rejects non-digits, masks and spaces', () => {
      for (const v of ['529.982.247-25', '5299822472a', ' 52998224725', '52998224725 ', '', '５２９９８２２４７２５']) {
        assert.equal(isValidCpf(v), false, v);
      }
    });
  });

  describe('isValidCnpj', () => {
    for (const cnpj of CNPJ_OK) it(`accepts ${cnpj}`, () => assert.equal(isValidCnpj(cnpj), true));

    it('rejects a wrong first check digit', () => assert.equal(isValidCnpj('11222333000191'), false));
    it('rejects a wrong second check digit', () => assert.equal(isValidCnpj('11222333000182'), false));
    it('rejects 13 and 15 digits', () => {
      assert.equal(isValidCnpj('1122233300018'), false);
      assert.equal(isValidCnpj('112223330001810'), false);
    });
    it('rejects all-equal digits', () => {
      for (let d = 0; d <= 9; d++) assert.equal(isValidCnpj(String(d).repeat(14)), false);
    });
    it('rejects non-digits and masks', () => {
      for (const v of ['11.222.333/0001-81', '1122233300018a', 'AB222333000181', '']) {
        assert.equal(isValidCnpj(v), false, v);
      }
    });
  });

  describe('isValidDocument', () => {
    it('11 digits is read as a CPF, 14 as a CNPJ', () => {
      assert.equal(documentType('52998224725'), 'CPF');
      assert.equal(documentType('11222333000181'), 'CNPJ');
      assert.equal(isValidDocument('52998224725'), true);
      assert.equal(isValidDocument('11222333000181'), true);
    });
    it('rejects any other length', () => {
      for (const n of [0, 1, 10, 12, 13, 15, 20]) {
        assert.equal(documentType('7'.repeat(n)), null);
        assert.equal(isValidDocument('7'.repeat(n)), false);
      }
    });
    it('rejects invalid check digits of either kind', () => {
      assert.equal(isValidDocument('52998224726'), false);
      assert.equal(isValidDocument('11222333000182'), false);
    });
    it('rejects all-equal and non-digits', () => {
      assert.equal(isValidDocument('00000000000'), false);
      assert.equal(isValidDocument('11111111111111'), false);
      assert.equal(isValidDocument('529.982.247-25'), false);
      assert.equal(documentType('5299822472x'), null);
    });
  });
});
