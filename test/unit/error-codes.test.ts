/**
 * The catalogue of error codes in docs/api.md "Errors" is the list in src/lib/errors.ts, row
 * for row (code, status, description), so the documentation cannot drift from what the API sends.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, codeForStatus, errorCode } from '../../src/contracts/errors';

function documentedCodes(): Array<{ code: string; status: number; description: string }> {
  const md = fs.readFileSync(path.join(__dirname, '../../docs/api.md'), 'utf8');
  const start = md.indexOf('\n### Error codes\n');
  assert.ok(start >= 0, 'docs/api.md has no "Error codes" section');
  const end = md.indexOf('\n#', start + 1);
  const section = md.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => ({
    code: m[1] as string,
    status: Number(m[2]),
    description: (m[3] as string).trim(),
  }));
}

describe('error codes: the catalogue', () => {
  it('docs/api.md lists exactly the codes of src/lib/errors.ts, with their status and meaning', () => {
    const expected = Object.entries(ERROR_CODES).map(([code, e]) => ({
      code,
      status: e.status,
      description: e.description,
    }));
    assert.deepEqual(documentedCodes(), expected);
  });

  it('codes are snake_case, and every status the middleware maps has a code of that status', () => {
    for (const code of Object.keys(ERROR_CODES)) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
    for (const status of [400, 401, 403, 404, 405, 409, 411, 413, 415, 418, 429, 500, 501, 502, 503]) {
      const code = codeForStatus(status);
      assert.ok(errorCode.safeParse(code).success, code);
      if (status !== 418) assert.equal(ERROR_CODES[code].status, status, `${status} → ${code}`);
    }
  });
});
