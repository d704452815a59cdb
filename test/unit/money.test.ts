import assert from 'node:assert/strict';
import { centsToDecimalString, computeFee, splitAvailableFirst } from '../../src/domain/money';

describe('money rules', () => {
  describe('computeFee: round-half-up(amount × bps / 10000) + fixed, capped at the amount', () => {
    it('takes the percentage of round amounts exactly', () => {
      assert.equal(computeFee(10_000, 99, 0), 99);
      assert.equal(computeFee(100_000, 250, 0), 2_500);
      assert.equal(computeFee(1, 0, 0), 0);
    });

    it('rounds exactly half a cent up and anything below it down', () => {
      assert.equal(computeFee(50, 100, 0), 1); // 0.5 → 1
      assert.equal(computeFee(49, 100, 0), 0); // 0.49 → 0
      assert.equal(computeFee(150, 100, 0), 2); // 1.5 → 2 (half up, not half even)
      assert.equal(computeFee(250, 100, 0), 3); // 2.5 → 3 (half up, not half even)
      assert.equal(computeFee(5_000, 1, 0), 1); // 0.5 → 1
      assert.equal(computeFee(4_999, 1, 0), 0); // 0.4999 → 0
      assert.equal(computeFee(5_051, 99, 0), 50); // 50.0049 → 50
      assert.equal(computeFee(5_556, 90, 0), 50); // 50.004 → 50
      assert.equal(computeFee(5_500, 91, 0), 50); // 50.05 → 50
      assert.equal(computeFee(5_495, 91, 0), 50); // 50.0045 → 50
      assert.equal(computeFee(5_550, 91, 0), 51); // 50.505 → 51
    });

    it('adds the fixed part after rounding', () => {
      assert.equal(computeFee(151, 99, 10), 11); // 1.4949 → 1, + 10
      assert.equal(computeFee(10_000, 0, 35), 35);
      assert.equal(computeFee(50, 100, 1), 2); // 0.5 → 1, + 1
    });

    it('never charges more than the amount', () => {
      assert.equal(computeFee(5, 99, 100), 5);
      assert.equal(computeFee(1, 10_000, 0), 1);
      assert.equal(computeFee(100, 10_000, 1), 100);
      assert.equal(computeFee(100, 9_999, 0), 100); // 99.99 → 100
      assert.equal(computeFee(101, 0, 100), 100); // just under the cap
    });

    it('stays exact where amount × bps passes 2^53', () => {
      const amount = Number.MAX_SAFE_INTEGER - 1; // even, so × 5000 / 10000 is exact
      assert.equal(computeFee(amount, 5_000, 0), amount / 2);
      assert.equal(computeFee(9_007_199_254_740_000, 1, 0), 900_719_925_474); // …474.0 exactly
      assert.equal(computeFee(9_007_199_254_735_000, 1, 0), 900_719_925_474); // …473.5 → up
    });

    it('refuses non-integer, negative or unsafe money and an out-of-range percentage', () => {
      assert.throws(() => computeFee(10.5, 99, 0), RangeError);
      assert.throws(() => computeFee(-1, 99, 0), RangeError);
      assert.throws(() => computeFee(Number.MAX_SAFE_INTEGER + 1, 99, 0), RangeError);
      assert.throws(() => computeFee(100, 99, 0.5), RangeError);
      assert.throws(() => computeFee(100, -1, 0), RangeError);
      assert.throws(() => computeFee(100, 10_001, 0), RangeError);
      assert.throws(() => computeFee(100, 9.9, 0), RangeError);
    });
  });

  describe('splitAvailableFirst', () => {
    it('takes available first, then pending', () => {
      assert.deepEqual(splitAvailableFirst(500, 300, 1_000), { fromAvailable: 300, fromPending: 200 });
      assert.deepEqual(splitAvailableFirst(100, 300, 0), { fromAvailable: 100, fromPending: 0 });
      assert.deepEqual(splitAvailableFirst(300, 0, 300), { fromAvailable: 0, fromPending: 300 });
    });
    it('uses both to the last cent and refuses one cent more', () => {
      assert.deepEqual(splitAvailableFirst(1_300, 300, 1_000), { fromAvailable: 300, fromPending: 1_000 });
      assert.equal(splitAvailableFirst(1_301, 300, 1_000), null);
    });
  });

  describe('centsToDecimalString', () => {
    it('formats cents with two decimals', () => {
      assert.equal(centsToDecimalString(0), '0.00');
      assert.equal(centsToDecimalString(1), '0.01');
      assert.equal(centsToDecimalString(10), '0.10');
      assert.equal(centsToDecimalString(100), '1.00');
      assert.equal(centsToDecimalString(123_456), '1234.56');
    });
  });
});
