import assert from 'node:assert/strict';
import { createDynamicPix, createStaticPix, hasError, parsePix, PixElementType } from 'pix-utils';
import {
  BrCodeError,
  buildBrCode,
  crc16,
  decodeFields,
  encodeWithCrc,
  foldToAscii,
  formatAmount,
  isValidTxid,
  MAX_AMOUNT_CENTS,
  newTxid,
  parseAmount,
  parseBrCode,
  tryParseBrCode,
  type BrCodeErrorCode,
  type BrCodeInput,
} from '../../src/pix/brcode';

// The BR Code manual's published examples.
const MANUAL_STATIC =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000' +
  '5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
const MANUAL_EMAIL =
  '00020101021126380014BR.GOV.BCB.PIX0116test@mail.com.br5204000053039865802BR5913Fulano de Tal' +
  '6009SAO PAULO630434FE';

const KEY = '123e4567-e12b-12d1-a456-426655440000';
const base = { key: KEY, merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' } as const;

function expectBrCodeError(fn: () => unknown, code: BrCodeErrorCode, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BrCodeError, `expected BrCodeError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** Deterministic PRNG (mulberry32) so a failing random case can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('pix/brcode', () => {
  describe('published examples', () => {
    it('builds the manual static example byte for byte (CRC 1D3D)', () => {
      assert.equal(buildBrCode(base), MANUAL_STATIC);
    });

    it('parses the manual static example', () => {
      const b = parseBrCode(MANUAL_STATIC);
      assert.equal(b.key, KEY);
      assert.equal(b.merchantName, 'Fulano de Tal');
      assert.equal(b.merchantCity, 'BRASILIA');
      assert.equal(b.txid, '***');
      assert.equal(b.amountCents, undefined);
      assert.equal(b.crc, '1D3D');
    });

    it('parses the e-mail example (upper-case GUI, field 01, no field 62; CRC 34FE)', () => {
      const b = parseBrCode(MANUAL_EMAIL);
      assert.equal(b.gui, 'BR.GOV.BCB.PIX');
      assert.equal(b.key, 'test@mail.com.br');
      assert.equal(b.initiationMethod, '11');
      assert.equal(b.merchantCity, 'SAO PAULO');
      assert.equal(b.txid, undefined);
      assert.equal(b.crc, '34FE');
    });

    it('re-encodes the e-mail example from its fields to the same string', () => {
      assert.equal(encodeWithCrc(parseBrCode(MANUAL_EMAIL).fields), MANUAL_EMAIL);
      assert.equal(crc16(MANUAL_EMAIL.slice(0, -4)), '34FE');
    });

    it('builds the e-mail example apart from the GUI case and the txid field', () => {
      const built = buildBrCode({
        key: 'test@mail.com.br',
        merchantName: 'Fulano de Tal',
        merchantCity: 'SAO PAULO',
        initiationMethod: '11',
      });
      const expectedBody = MANUAL_EMAIL.slice(0, -8).replace('BR.GOV.BCB.PIX', 'br.gov.bcb.pix') + '62070503***';
      assert.equal(built.slice(0, -8), expectedBody);
    });
  });

  describe('CRC16-CCITT', () => {
    it('matches the standard check value of "123456789" (0x29B1 for CCITT-FALSE)', () => {
      assert.equal(crc16('123456789'), '29B1');
    });
    it('is 0xFFFF (the init) for empty input', () => assert.equal(crc16(''), 'FFFF'));

    it('is zero-padded: a payload whose CRC is 000A', () => {
      const p = buildBrCode({
        key: 'fulano@example.com',
        merchantName: 'Fulano de Tal',
        merchantCity: 'Sao Paulo',
        amountCents: 1983,
      });
      assert.equal(p.slice(-8), '6304000A');
      assert.equal(parseBrCode(p).crc, '000A');
      // pix-utils computes the same CRC for the same content.
      const theirs = createStaticPix({
        pixKey: 'fulano@example.com',
        merchantName: 'FULANO DE TAL',
        merchantCity: 'SAO PAULO',
        transactionAmount: 19.83,
      });
      assert.ok(!hasError(theirs));
      assert.equal(crc16(theirs.toBRCode().slice(0, -4)), theirs.toBRCode().slice(-4));
    });

    it('is always 4 upper-case hex digits over many payloads', () => {
      let leadingZero = 0;
      for (let a = 1; a <= 3000; a++) {
        const p = buildBrCode({ ...base, amountCents: a });
        const crc = p.slice(-4);
        assert.match(crc, /^[0-9A-F]{4}$/);
        assert.equal(p.slice(-8, -4), '6304');
        if (crc.startsWith('0')) leadingZero++;
      }
      assert.ok(leadingZero > 0, 'the sample must include CRCs below 0x1000');
    });
  });

  describe('builder', () => {
    it('formats amounts from integer cents', () => {
      assert.equal(formatAmount(1), '0.01');
      assert.equal(formatAmount(10), '0.10');
      assert.equal(formatAmount(99), '0.99');
      assert.equal(formatAmount(100), '1.00');
      assert.equal(formatAmount(123456), '1234.56');
      assert.equal(formatAmount(MAX_AMOUNT_CENTS), '9999999999.99');
    });

    it('refuses amounts that are not whole positive cents or too long for field 54', () => {
      for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_AMOUNT_CENTS + 1]) {
        expectBrCodeError(() => buildBrCode({ ...base, amountCents: bad }), 'INVALID_INPUT', /amount/);
      }
    });

    it('writes field 54 between 53 and 58, and omits it without an amount', () => {
      assert.ok(buildBrCode({ ...base, amountCents: 123456 }).includes('530398654071234.565802BR'));
      assert.ok(buildBrCode({ ...base, amountCents: 1 }).includes('54040.01'));
      assert.ok(!buildBrCode(base).includes('5303986' + '54'));
    });

    it('folds accents to ASCII and keeps case', () => {
      const p = parseBrCode(buildBrCode({ ...base, merchantName: 'João Conceição Müller', merchantCity: 'São Paulo' }));
      assert.equal(p.merchantName, 'Joao Conceicao Muller');
      assert.equal(p.merchantCity, 'Sao Paulo');
      assert.equal(foldToAscii('Ærø Straße Łódź ☃ café'), 'AEro Strasse Lodz cafe');
      assert.equal(foldToAscii('  a\u00a0\tb  '), 'a b');
    });

    it('truncates the name to 25 and the city to 15 characters, after folding', () => {
      const name = 'Ááááá Bbbbb Ccccc Ddddd Eeeee'; // 29
      const p = parseBrCode(buildBrCode({ ...base, merchantName: name, merchantCity: 'Florianópolis do Sul' }));
      assert.equal(p.merchantName, 'Aaaaa Bbbbb Ccccc Ddddd E');
      assert.equal(p.merchantName.length, 25);
      assert.equal(p.merchantCity, 'Florianopolis d');
      assert.equal(p.merchantCity.length, 15);
    });

    it('25 and 15 characters pass untouched; a space left at the cut is trimmed', () => {
      const name25 = 'A'.repeat(25);
      const city15 = 'B'.repeat(15);
      const p = parseBrCode(buildBrCode({ ...base, merchantName: name25, merchantCity: city15 }));
      assert.equal(p.merchantName, name25);
      assert.equal(p.merchantCity, city15);
      const q = parseBrCode(
        buildBrCode({ ...base, merchantName: 'A'.repeat(24) + ' B', merchantCity: 'C'.repeat(14) + ' D' }),
      );
      assert.equal(q.merchantName, 'A'.repeat(24));
      assert.equal(q.merchantCity, 'C'.repeat(14));
    });

    it('refuses a name or city that folds to nothing', () => {
      expectBrCodeError(() => buildBrCode({ ...base, merchantName: '  ' }), 'INVALID_INPUT', /merchantName/);
      expectBrCodeError(() => buildBrCode({ ...base, merchantCity: '☃☃' }), 'INVALID_INPUT', /merchantCity/);
    });

    it('accepts txids of 26 to 35 alphanumerics and "***"', () => {
      for (const txid of ['a'.repeat(26), 'Z'.repeat(35), 'abcXYZ0123456789abcXYZ0123', '***']) {
        assert.equal(parseBrCode(buildBrCode({ ...base, txid })).txid, txid);
      }
      assert.equal(parseBrCode(buildBrCode(base)).txid, '***');
    });

    it('refuses txids of 25 or 36 characters and non-alphanumerics', () => {
      for (const txid of [
        'a'.repeat(25),
        'a'.repeat(36),
        'a'.repeat(29) + '-',
        'a'.repeat(29) + 'ç',
        'a'.repeat(29) + ' ',
        '',
        '**',
      ]) {
        expectBrCodeError(() => buildBrCode({ ...base, txid }), 'INVALID_INPUT', /txid/);
      }
      assert.equal(isValidTxid('a'.repeat(26)), true);
      assert.equal(isValidTxid('a'.repeat(35)), true);
      assert.equal(isValidTxid('a'.repeat(25)), false);
      assert.equal(isValidTxid('a'.repeat(36)), false);
    });

    it('newTxid: 32 alphanumerics, valid, unique, all 62 characters in use', () => {
      const seen = new Set<string>();
      const chars = new Set<string>();
      for (let i = 0; i < 2000; i++) {
        const t = newTxid();
        assert.match(t, /^[A-Za-z0-9]{32}$/);
        assert.equal(isValidTxid(t), true);
        seen.add(t);
        for (const c of t) chars.add(c);
      }
      assert.equal(seen.size, 2000);
      assert.equal(chars.size, 62);
    });

    it('dynamic codes carry the location url in 26-25', () => {
      const p = parseBrCode(
        buildBrCode({
          url: 'pix.example.com/qr/v2/9d36b84f',
          merchantName: 'Loja',
          merchantCity: 'Recife',
          initiationMethod: '12',
        }),
      );
      assert.equal(p.url, 'pix.example.com/qr/v2/9d36b84f');
      assert.equal(p.key, undefined);
      assert.equal(p.initiationMethod, '12');
    });

    it('additional info is folded and cut to what field 26 has room for', () => {
      const p = parseBrCode(buildBrCode({ ...base, additionalInfo: 'Pedido nº 42 – obrigado! '.repeat(5) }));
      assert.ok(p.additionalInfo);
      assert.match(p.additionalInfo, /^Pedido n 42 obrigado!/);
      const account = p.fields.find((f) => f.id === '26');
      assert.equal(account?.value.length, 99);
    });

    it('refuses a key or url that is empty, too long or not ASCII, and both together', () => {
      expectBrCodeError(() => buildBrCode({ ...base, key: '' }), 'INVALID_INPUT', /key/);
      expectBrCodeError(() => buildBrCode({ ...base, key: 'a'.repeat(78) }), 'INVALID_INPUT', /key/);
      expectBrCodeError(() => buildBrCode({ ...base, key: 'joão@example.com' }), 'INVALID_INPUT', /key/);
      expectBrCodeError(
        () => buildBrCode({ url: 'x'.repeat(78), merchantName: 'a', merchantCity: 'b' }),
        'INVALID_INPUT',
        /url/,
      );
      const both = { ...base, url: 'pix.example.com/x' } as unknown as BrCodeInput;
      expectBrCodeError(() => buildBrCode(both), 'INVALID_INPUT', /not both/);
      const neither = { merchantName: 'a', merchantCity: 'b' } as unknown as BrCodeInput;
      expectBrCodeError(() => buildBrCode(neither), 'INVALID_INPUT', /key or a location url/);
    });

    it('a 77-character key (the longest e-mail key) fits field 26', () => {
      const key = 'a'.repeat(60) + '@' + 'b'.repeat(12) + '.com';
      assert.equal(parseBrCode(buildBrCode({ ...base, key })).key, key);
    });
  });

  describe('parser', () => {
    const good = buildBrCode({ ...base, amountCents: 123456, txid: 'abcdefghijklmnopqrstuvwxyz012345' });

    it('round-trips every field', () => {
      const p = parseBrCode(good);
      assert.equal(p.key, KEY);
      assert.equal(p.amountCents, 123456);
      assert.equal(p.txid, 'abcdefghijklmnopqrstuvwxyz012345');
      assert.equal(p.merchantCategoryCode, '0000');
      assert.equal(p.currency, '986');
      assert.equal(p.countryCode, 'BR');
      assert.deepEqual(
        p.fields.map((f) => f.id),
        ['00', '26', '52', '53', '54', '58', '59', '60', '62', '63'],
      );
    });

    it('reads amounts written by other generators', () => {
      assert.equal(parseAmount('10'), 1000);
      assert.equal(parseAmount('10.5'), 1050);
      assert.equal(parseAmount('0.01'), 1);
      assert.equal(parseAmount('1234.56'), 123456);
      for (const bad of ['', '.5', '1.234', '1,00', '-1.00', '0.00', '12345678901.00', '1e3']) {
        expectBrCodeError(() => parseAmount(bad), 'INVALID_FIELD');
      }
    });

    it('rejects a wrong CRC, whichever character changed', () => {
      expectBrCodeError(() => parseBrCode(good.slice(0, -4) + '0000'), 'BAD_CRC', /CRC mismatch/);
      const tampered = good.replace('1234.56', '9234.56');
      expectBrCodeError(() => parseBrCode(tampered), 'BAD_CRC');
    });

    it('accepts a lower-case CRC (some generators write one)', () => {
      const lower = good.slice(0, -4) + good.slice(-4).toLowerCase();
      assert.equal(parseBrCode(lower).amountCents, 123456);
    });

    it('gives MALFORMED for broken structure, never an untyped error', () => {
      const cases: unknown[] = [
        '',
        'hello',
        undefined,
        null,
        42,
        { payload: good },
        good.slice(0, -1),
        good + '0',
        good.slice(4),
        '0002016304' + crc16('0002016304'), // well-formed but without any PIX field
        '0002026304' + crc16('0002026304'), // field 00 is not "01"
        '00020126XX',
        '0002016300',
        '000201' + '26' + '99' + 'x'.repeat(10),
      ];
      for (const c of cases) {
        assert.throws(
          () => parseBrCode(c),
          (err: unknown) => err instanceof BrCodeError,
          `case ${JSON.stringify(c)}`,
        );
        const r = tryParseBrCode(c);
        assert.equal(r.ok, false);
      }
    });

    it('gives MISSING_FIELD / INVALID_FIELD for content that is not a PIX code', () => {
      const withFields = (fields: [string, string][]): string =>
        encodeWithCrc(fields.map(([id, value]) => ({ id, value })));
      const std: [string, string][] = [
        ['00', '01'],
        ['26', '0014br.gov.bcb.pix0111fulano@x.io'],
        ['52', '0000'],
        ['53', '986'],
        ['58', 'BR'],
        ['59', 'Fulano'],
        ['60', 'Recife'],
      ];
      assert.equal(parseBrCode(withFields(std)).key, 'fulano@x.io');
      const without = (id: string) => std.filter(([i]) => i !== id);
      const replace = (id: string, value: string) => std.map(([i, v]): [string, string] => [i, i === id ? value : v]);
      for (const id of ['26', '52', '53', '58', '59', '60']) {
        expectBrCodeError(() => parseBrCode(withFields(without(id))), 'MISSING_FIELD', new RegExp(`field ${id}`));
      }
      expectBrCodeError(
        () => parseBrCode(withFields(replace('26', '0014br.gov.bcb.pix'))),
        'MISSING_FIELD',
        /neither a key/,
      );
      expectBrCodeError(() => parseBrCode(withFields(replace('26', '0011com.example0101x'))), 'INVALID_FIELD', /26-00/);
      expectBrCodeError(() => parseBrCode(withFields(replace('53', '840'))), 'INVALID_FIELD', /986/);
      expectBrCodeError(() => parseBrCode(withFields(replace('58', 'US'))), 'INVALID_FIELD', /58/);
      expectBrCodeError(() => parseBrCode(withFields(replace('59', 'x'.repeat(26)))), 'INVALID_FIELD', /59/);
      expectBrCodeError(() => parseBrCode(withFields(replace('60', 'x'.repeat(16)))), 'INVALID_FIELD', /60/);
      expectBrCodeError(() => parseBrCode(withFields([...std, ['54', '1,00']])), 'INVALID_FIELD', /54/);
      expectBrCodeError(() => parseBrCode(withFields([...std, ['62', '0505a-b-c']])), 'INVALID_FIELD', /txid/);
      expectBrCodeError(() => parseBrCode(withFields([...std, ['01', '13']])), 'INVALID_FIELD', /field 01/);
      expectBrCodeError(() => parseBrCode(withFields([...std, ['59', 'Twice']])), 'MALFORMED', /twice/);
      expectBrCodeError(() => parseBrCode(withFields([['01', '12'], ...std])), 'MALFORMED', /field 00/);
    });

    it('decodeFields reports where the structure breaks', () => {
      assert.deepEqual(decodeFields('0002010103abc'), [
        { id: '00', value: '01' },
        { id: '01', value: 'abc' },
      ]);
      expectBrCodeError(() => decodeFields('0002010105abc'), 'MALFORMED', /runs past the end/);
      expectBrCodeError(() => decodeFields('000201010'), 'MALFORMED', /offset 6/);
      expectBrCodeError(() => decodeFields('0000'), 'MALFORMED', /empty/);
    });
  });

  describe('cross-check with pix-utils (independent implementation)', () => {
    const rnd = prng(20240604);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
    const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZÁÂÃÉÊÍÓÔÕÚÇ';
    const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const word = (n: number): string => Array.from({ length: n }, () => pick([...LETTERS])).join('');
    const words = (max: number): string => {
      let s = word(int(1, Math.min(8, max)));
      while (s.length < max - 2 && rnd() < 0.6) s += ' ' + word(int(1, Math.min(8, max - s.length - 1)));
      return s.slice(0, max).trim();
    };
    const keyOf = (): string =>
      pick([
        () => '123e4567-e12b-12d1-a456-426655440000',
        () => `${word(int(1, 10)).toLowerCase().normalize('NFD').replace(/\p{M}/gu, '')}@example.com.br`,
        () => `+55${int(10, 99)}9${int(10000000, 99999999)}`,
        () => '52998224725',
        () => '11222333000181',
      ])();
    const txidOf = (lo: number, hi: number): string =>
      Array.from({ length: int(lo, hi) }, () => pick([...ALNUM])).join('');

    it('static codes: our builder and pix-utils produce the same string (300 random cases)', () => {
      for (let i = 0; i < 300; i++) {
        // pix-utils upper-cases name and city, so the inputs are upper-case here.
        const merchantName = words(25);
        const merchantCity = words(15);
        const pixKey = keyOf();
        const cents = rnd() < 0.2 ? undefined : int(1, rnd() < 0.5 ? 10_000 : 99_999_999);
        const theirs = createStaticPix({
          merchantName,
          merchantCity,
          pixKey,
          transactionAmount: cents === undefined ? 0 : cents / 100,
        });
        assert.ok(!hasError(theirs), JSON.stringify(theirs));
        const input: BrCodeInput = { key: pixKey, merchantName, merchantCity };
        if (cents !== undefined) input.amountCents = cents;
        assert.equal(buildBrCode(input), theirs.toBRCode(), `case ${i}`);
      }
    });

    it('dynamic codes: same string as pix-utils (100 random cases)', () => {
      for (let i = 0; i < 100; i++) {
        const url = `pix.example.com/qr/v2/${txidOf(26, 35)}`;
        const merchantName = words(25);
        const merchantCity = words(15);
        const theirs = createDynamicPix({ url, merchantName, merchantCity, oneTime: true });
        assert.ok(!hasError(theirs));
        assert.equal(buildBrCode({ url, merchantName, merchantCity, initiationMethod: '12' }), theirs.toBRCode());
      }
    });

    it('our codes with cob txids (26–35) parse in pix-utils with the same fields (300 cases)', () => {
      for (let i = 0; i < 300; i++) {
        const key = keyOf();
        const txid = rnd() < 0.5 ? newTxid() : txidOf(26, 35);
        const cents = int(1, 999_999_999);
        const code = buildBrCode({
          key,
          txid,
          amountCents: cents,
          merchantName: words(25),
          merchantCity: words(15),
          initiationMethod: '12',
        });
        const theirs = parsePix(code);
        assert.ok(!hasError(theirs), `${code}: ${JSON.stringify(theirs)}`);
        assert.equal(theirs.type, PixElementType.STATIC);
        if (theirs.type !== PixElementType.STATIC) continue;
        const ours = parseBrCode(code);
        assert.equal(theirs.pixKey, key);
        assert.equal(theirs.txid, txid);
        assert.equal(Math.round((theirs.transactionAmount ?? 0) * 100), cents);
        assert.equal(theirs.merchantName, ours.merchantName);
        assert.equal(theirs.merchantCity, ours.merchantCity);
      }
    });

    it('pix-utils codes parse in ours with the same fields (300 cases, short static txids too)', () => {
      for (let i = 0; i < 300; i++) {
        const pixKey = keyOf();
        const cents = rnd() < 0.2 ? undefined : int(1, 99_999_999);
        const txid = rnd() < 0.3 ? undefined : txidOf(1, 25);
        const theirs = createStaticPix({
          merchantName: words(25),
          merchantCity: words(15),
          pixKey,
          transactionAmount: cents === undefined ? 0 : cents / 100,
          ...(txid === undefined ? {} : { txid }),
        });
        assert.ok(!hasError(theirs));
        const ours = parseBrCode(theirs.toBRCode());
        assert.equal(ours.key, pixKey);
        assert.equal(ours.amountCents, cents);
        assert.equal(ours.txid, txid ?? '***');
        assert.equal(ours.merchantName, theirs.merchantName.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase());
      }
    });

    it('both sides agree a corrupted code is invalid', () => {
      for (let i = 0; i < 100; i++) {
        const code = buildBrCode({
          key: keyOf(),
          amountCents: int(1, 1_000_000),
          txid: newTxid(),
          merchantName: words(25),
          merchantCity: words(15),
        });
        const pos = int(0, code.length - 9); // any character before the CRC field
        const ch = code[pos] === '7' ? '8' : '7';
        const corrupted = code.slice(0, pos) + ch + code.slice(pos + 1);
        assert.equal(tryParseBrCode(corrupted).ok, false, corrupted);
        assert.ok(hasError(parsePix(corrupted)), corrupted);
      }
    });
  });
});
