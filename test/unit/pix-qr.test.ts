import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { buildBrCode, newTxid } from '../../src/pix/brcode';
import { closeQrRenderer, createQrRenderer, QrRenderError, renderQrDataUrl, type QrRenderer } from '../../src/pix/qr';
import { optimalSegments } from '../../src/pix/qr-segments';
import { encodeQrPng, qrMatrix, renderQrDataUrlSync, PNG_DATA_URL_PREFIX } from '../../src/pix/qr-png';

const PREFIX = 'data:image/png;base64,';

/** Data URL → PNG (pngjs checks chunk CRCs and the zlib stream) → QR text (jsQR), or null. */
function decode(url: string): { text: string | null; width: number; height: number } {
  assert.ok(url.startsWith(PREFIX), url.slice(0, 40));
  const png = PNG.sync.read(Buffer.from(url.slice(PREFIX.length), 'base64'));
  const found = jsQR(
    new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
    png.width,
    png.height,
  );
  return { text: found ? found.data : null, width: png.width, height: png.height };
}

const KEYS = [
  '123e4567-e12b-12d1-a456-426655440000',
  'financeiro@lojaexemplo.com.br',
  '+5511987654321',
  '11222333000181',
  'a'.repeat(60) + '@' + 'b'.repeat(12) + '.com', // 77 characters, the longest key
];

function payloads(): string[] {
  const out = KEYS.map((key, i) =>
    buildBrCode({
      key,
      merchantName: 'Loja Exemplo Comércio Ltda',
      merchantCity: 'São Paulo',
      amountCents: 1 + i * 123457,
      txid: newTxid(),
      initiationMethod: '12',
    }),
  );
  out.push(
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000' +
      '5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
  );
  out.push(
    buildBrCode({
      url: 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25',
      merchantName: 'X',
      merchantCity: 'Y',
    }),
  );
  return out;
}

describe('pix/qr', () => {
  after(async () => {
    await closeQrRenderer();
  });

  describe('segment split (qr-segments)', () => {
    const text = (segs: ReturnType<typeof optimalSegments>): string =>
      segs.map((s) => (s.mode === 'byte' ? s.data.toString('utf8') : s.data)).join('');

    it('joins back to the input, whatever the input', () => {
      for (const t of [...payloads(), 'x', '1', 'A', 'ação 123 ☃ 😀', 'a'.repeat(300) + '9'.repeat(300)]) {
        assert.equal(text(optimalSegments(t)), t);
      }
    });

    it('uses the compact modes where they pay off', () => {
      assert.deepEqual(optimalSegments('12345678901234567890'), [{ mode: 'numeric', data: '12345678901234567890' }]);
      assert.deepEqual(optimalSegments('FULANO DE TAL 123'), [{ mode: 'alphanumeric', data: 'FULANO DE TAL 123' }]);
      assert.deepEqual(optimalSegments('hello'), [{ mode: 'byte', data: Buffer.from('hello') }]);
      // A short digit run inside lower-case text is not worth two mode switches.
      assert.equal(optimalSegments('abc12def').length, 1);
      assert.deepEqual(
        optimalSegments('abc' + '1'.repeat(30) + 'def').map((s) => s.mode),
        ['byte', 'numeric', 'byte'],
      );
    });
  });

  describe('synchronous encoder (qr-png)', () => {
    it('writes a 1-bit grayscale PNG with a 4-module quiet zone at 4 px per module', () => {
      const text = payloads()[0] as string;
      const m = qrMatrix(text);
      const png = encodeQrPng(m);
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert.equal(png.toString('latin1', 12, 16), 'IHDR');
      assert.equal(png.readUInt32BE(16), (m.size + 8) * 4);
      assert.equal(png[24], 1, 'bit depth');
      assert.equal(png[25], 0, 'grayscale');
      const decoded = PNG.sync.read(png);
      assert.equal(decoded.width, (m.size + 8) * 4);
      // Top-left pixel is quiet zone (white); the first finder pattern starts black at 4 modules in.
      assert.equal(decoded.data[0], 255);
      const at = (x: number, y: number): number => decoded.data[(y * decoded.width + x) * 4] as number;
      assert.equal(at(16, 16), 0);
      assert.equal(at(15, 16), 255);
    });

    it('every module maps to a scale × scale block of the right colour', () => {
      const m = qrMatrix('hello world 1234567890');
      const decoded = PNG.sync.read(encodeQrPng(m, { scale: 3, margin: 2 }));
      for (let r = 0; r < m.size; r++) {
        for (let c = 0; c < m.size; c++) {
          const dark = m.data[r * m.size + c] === 1;
          for (const [dy, dx] of [
            [0, 0],
            [2, 2],
            [1, 0],
          ] as const) {
            const x = (c + 2) * 3 + dx;
            const y = (r + 2) * 3 + dy;
            assert.equal(decoded.data[(y * decoded.width + x) * 4], dark ? 0 : 255, `module ${r},${c}`);
          }
        }
      }
    });

    it('reaches the same QR version as qrcode with its own (slow) optimal segmentation', () => {
      const more = [100, 180, 190, 600, 1500, 2300].map((n) =>
        Array.from({ length: n }, (_, i) => 'aB3*5'[i % 5]).join(''),
      );
      for (const text of [...payloads(), ...more, 'FULANO 123', '12345678901234567890']) {
        assert.equal(qrMatrix(text).size, QRCode.create(text, { errorCorrectionLevel: 'M' }).modules.size, text);
      }
    });

    it('decodes back to the BR Code', () => {
      for (const text of payloads()) assert.equal(decode(renderQrDataUrlSync(text)).text, text);
      assert.equal(PNG_DATA_URL_PREFIX, PREFIX);
    });

    it('refuses bad scale or margin and empty text', () => {
      const m = qrMatrix('x');
      assert.throws(() => encodeQrPng(m, { scale: 0, margin: 4 }), RangeError);
      assert.throws(() => encodeQrPng(m, { scale: 4, margin: -1 }), RangeError);
      assert.throws(() => qrMatrix(''), RangeError);
    });
  });

  for (const workers of [0, 1, 2]) {
    describe(`renderer with ${workers} worker(s)`, () => {
      let renderer: QrRenderer;
      before(() => {
        renderer = createQrRenderer({ workers });
      });
      after(async () => {
        await renderer.close();
      });

      it('renders images that decode to the payload', async () => {
        await renderer.warm();
        for (const text of payloads()) {
          const url = await renderer.render(text);
          assert.equal(url, renderQrDataUrlSync(text), 'same bytes as the synchronous encoder');
          assert.equal(decode(url).text, text);
        }
      });

      it('answers concurrent renders each with its own image', async () => {
        const texts = Array.from({ length: 60 }, (_, i) =>
          buildBrCode({
            key: KEYS[i % KEYS.length] as string,
            merchantName: 'Loja',
            merchantCity: 'Recife',
            amountCents: i + 1,
            txid: newTxid(),
          }),
        );
        const urls = await Promise.all(texts.map((t) => renderer.render(t)));
        urls.forEach((u, i) => assert.equal(u, renderQrDataUrlSync(texts[i] as string)));
        for (const i of [0, 29, 59]) assert.equal(decode(urls[i] as string).text, texts[i]);
      });

      it('rejects with QrRenderError for text that cannot be a QR, and keeps working', async () => {
        await assert.rejects(renderer.render(''), QrRenderError);
        await assert.rejects(renderer.render('x'.repeat(3000)), QrRenderError); // over version 40-M capacity
        const text = payloads()[1] as string;
        assert.equal(decode(await renderer.render(text)).text, text);
      });

      it('refuses work once closed', async () => {
        const r = createQrRenderer({ workers });
        await r.close();
        await assert.rejects(r.render('x'), QrRenderError);
      });
    });
  }

  it('renderQrDataUrl (shared pool) decodes back, and restarts after closeQrRenderer', async () => {
    const text = payloads()[0] as string;
    assert.equal(decode(await renderQrDataUrl(text)).text, text);
    await closeQrRenderer();
    assert.equal(decode(await renderQrDataUrl(text)).text, text);
  });

  it('idle workers do not keep the process alive, and a pending render does', () => {
    // A script that renders once and returns must exit on its own, without closeQrRenderer().
    const qrModule = require.resolve('../../src/pix/qr');
    const code =
      `const { renderQrDataUrl } = require(${JSON.stringify(qrModule)});` +
      `renderQrDataUrl('exit-check').then((u) => console.log(u.startsWith('data:image/png;base64,') ? 'ok' : 'bad'));`;
    const r = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', code], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.error, undefined);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ok');
  });

  describe('worker failures', () => {
    const tsx = JSON.stringify(require.resolve('tsx/cjs'));
    const workerFile = JSON.stringify(require.resolve('../../src/pix/qr-worker'));

    it('a worker that cannot start: renders fall back to inline, and succeed', async () => {
      const r = createQrRenderer({ workers: 1, workerBootstrap: `throw new Error('no worker here')` });
      try {
        const text = payloads()[0] as string;
        const urls = await Promise.all([r.render(text), r.render(text)]);
        for (const u of urls) assert.equal(decode(u).text, text);
        await r.warm(); // returns at once now
        assert.equal(decode(await r.render(text)).text, text);
      } finally {
        await r.close();
      }
    });

    it('a worker that dies mid-job: that job fails with QrRenderError, a replacement serves the next', async () => {
      // The real worker, plus a listener (registered first) that kills the thread on the text "die".
      const bootstrap =
        `require(${tsx});` +
        `require('node:worker_threads').parentPort.on('message', (j) => { if (j.text === 'die') process.exit(3); });` +
        `require(${workerFile});`;
      const r = createQrRenderer({ workers: 1, workerBootstrap: bootstrap });
      try {
        await r.warm();
        const text = payloads()[3] as string;
        assert.equal(decode(await r.render(text)).text, text);
        await assert.rejects(
          r.render('die'),
          (err: unknown) => err instanceof QrRenderError && /exited with code 3/.test(err.message),
        );
        assert.equal(decode(await r.render(text)).text, text);
      } finally {
        await r.close();
      }
    });
  });

  it('qrcode typings: create() returns the BitMatrix we read', () => {
    const qr = QRCode.create('abc', { errorCorrectionLevel: 'M', maskPattern: 0 });
    assert.equal(qr.modules.data.length, qr.modules.size * qr.modules.size);
    assert.equal(qr.maskPattern, 0);
  });
});
