import assert from 'node:assert/strict';
import path from 'node:path';
import {
  brokenCitations,
  findCitations,
  headingsOf,
  repositoryCitations,
  repositoryDocReader,
} from '../support/doc-citations';

const ROOT = path.resolve(__dirname, '../..');
// Built from pieces so that the examples below are not themselves citations of this file.
const README = 'READ' + 'ME';
const API_DOC = 'docs/' + 'api.md';

describe('documentation citations in code', () => {
  it('every citation of README or docs/<file>.md names a heading of that file', () => {
    const citations = repositoryCitations(ROOT);
    // The scan must see the code base's citations, or an empty scan would pass.
    assert.ok(citations.length > 200, `only ${citations.length} citations found`);
    assert.ok(citations.some((c) => c.doc === 'docs/performance.md' && c.file.startsWith('src/')));
    assert.ok(citations.some((c) => c.doc === 'docs/testing.md' && c.file.startsWith('test/')));
    const problems = brokenCitations(citations, repositoryDocReader(ROOT));
    assert.deepEqual(problems, [], `citations without a heading:\n${problems.join('\n')}`);
  });

  it('fails on a planted broken citation, naming file and line', () => {
    const source = [
      '/**',
      ` * A real one (${API_DOC} "Errors"), one wrapped over two lines (${README}`,
      ` * "Commands"), one with the heading wrapped (${API_DOC} "Receiving`,
      ' * webhooks"),',
      ` * and a broken one (${API_DOC} "No such section").`,
      ' */',
      `// and another (${README} "Gone"); docs/${'missing'}.md "X" names a file that does not exist.`,
    ].join('\n');
    const citations = findCitations('src/planted.ts', source);
    assert.deepEqual(
      citations.map((c) => [c.line, c.doc, c.heading]),
      [
        [2, API_DOC, 'Errors'],
        [2, 'README.md', 'Commands'],
        [3, API_DOC, 'Receiving webhooks'],
        [5, API_DOC, 'No such section'],
        [7, 'README.md', 'Gone'],
        [7, 'docs/missing.md', 'X'],
      ],
    );
    const problems = brokenCitations(citations, repositoryDocReader(ROOT));
    assert.deepEqual(problems, [
      `src/planted.ts:5: ${API_DOC} has no heading "No such section"`,
      'src/planted.ts:7: README.md has no heading "Gone"',
      'src/planted.ts:7: cites docs/missing.md, which does not exist',
    ]);
  });

  it("resolves a bare README to the citing package's own README, and ignores headings in code blocks", () => {
    const [c] = findCitations('tools/some-server/src/a.ts', `// (${README} "Durable state")`);
    assert.equal(c.doc, 'tools/some-server/README.md');
    const headings = headingsOf('# Title\n\n```sh\n# not a heading\n```\n### Deep one ##\n');
    assert.deepEqual([...headings], ['Title', 'Deep one']);
  });
});
