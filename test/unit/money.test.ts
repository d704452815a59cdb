import assert from 'node:assert/strict';
import { centsToDecimalString, computeFee, splitAvailableFirst } from '../../src/domain/money';

describe('money rules', () => {
  it('rounds the percentage fee half up and adds the fixed part', () => {
    assert.equal(computeFee(10_000, 99, 0), 99);
    assert.equal(computeFee(50, 100, 0), 1); // 0.5 → 1
    assert.equal(computeFee(49, 100, 0), 0); // 0.49 → 0
    assert.equal(computeFee(151, 99, 10), 11); // 1.4949 → 1, + 10
    assert.equal(computeFee(1, 0, 0), 0);
  });
  it('never charges a fee above the amount', () => {
    assert.equal(computeFee(5, 99, 100), 5);
    assert.equal(computeFee(1, 10_000, 0), 1);
  });
  it('refuses non-integer money', () => {
    assert.throws(() => computeFee(10.5, 99, 0), RangeError);
    assert.throws(() => computeFee(-1, 99, 0), RangeError);
  });
  it('splits a debit available first', () => {
    assert.deepEqual(splitAvailableFirst(500, 300, 1_000), { fromAvailable: 300, fromPending: 200 });
    assert.deepEqual(splitAvailableFirst(100, 300, 0), { fromAvailable: 100, fromPending: 0 });
    assert.equal(splitAvailableFirst(1_301, 300, 1_000), null);
  });
  it('formats cents as a two-decimal string', () => {
    assert.equal(centsToDecimalString(1), '0.01');
    assert.equal(centsToDecimalString(100), '1.00');
    assert.equal(centsToDecimalString(123_456), '1234.56');
  });
});
