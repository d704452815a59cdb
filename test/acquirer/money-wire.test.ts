/** Cents ↔ BCB decimal strings, exact on digits (the reference here is BigInt arithmetic). */
import assert from 'node:assert/strict';
import { centsToWire, MAX_WIRE_CENTS, wireToCents } from '../../src/acquirer/money-wire';

const reference = (cents: number): string => {
  const b = BigInt(cents);
  return `${b / 100n}.${String(b % 100n).padStart(2, '0')}`;
};

describe('acquirer money on the wire', () => {
  it('formats cents with two decimals', () => {
    assert.equal(centsToWire(0), '0.00');
    assert.equal(centsToWire(1), '0.01');
    assert.equal(centsToWire(10), '0.10');
    assert.equal(centsToWire(100), '1.00');
    assert.equal(centsToWire(1_234), '12.34');
    assert.equal(centsToWire(MAX_WIRE_CENTS), '9999999999.99');
  });

  it('round-trips every amount up to R$ 1,000 and a spread of large ones, matching BigInt', () => {
    for (let c = 0; c <= 100_000; c++) {
      const w = centsToWire(c);
      assert.equal(w, reference(c));
      assert.equal(wireToCents(w), c);
    }
    for (let i = 0; i < 2_000; i++) {
      const c = Math.floor(Math.random() * MAX_WIRE_CENTS);
      assert.equal(centsToWire(c), reference(c));
      assert.equal(wireToCents(centsToWire(c)), c);
    }
  });

  it('never goes through floats: amounts whose float sums drift stay exact', () => {
    // 0.1 + 0.2 !== 0.3 in floats; in cents it is 10 + 20 = 30.
    assert.equal(wireToCents('0.10')! + wireToCents('0.20')!, wireToCents('0.30'));
    assert.equal(wireToCents('1.15'), 115); // 1.15 * 100 = 114.99999999999999 as a float
    assert.equal(wireToCents('4.35'), 435); // 4.35 * 100 = 434.99999999999994
  });

  it('refuses what is not integer cents in range', () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity, MAX_WIRE_CENTS + 1, Number.MAX_SAFE_INTEGER + 2]) {
      assert.throws(() => centsToWire(bad), RangeError, String(bad));
    }
  });

  it('parses only the BCB pattern', () => {
    for (const bad of [
      '1',
      '1.5',
      '1.234',
      '.50',
      '1,50',
      '-1.00',
      '+1.00',
      ' 1.00',
      '1.00 ',
      '1e2.00',
      '12345678901.00',
      '',
      12.5,
      null,
      undefined,
    ]) {
      assert.equal(wireToCents(bad), null, JSON.stringify(bad));
    }
    assert.equal(wireToCents('0000000001.00'), 100);
  });
});
