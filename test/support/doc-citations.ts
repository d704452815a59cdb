/**
 * Comments cite documentation by section: `README` or `docs/<file>.md`, then the heading in double
 * quotes (the citation may wrap onto the next comment line). This module
 * finds those citations and reports every one whose file has no heading of that name, so a section
 * renamed or moved in the docs cannot leave code pointing at nothing (test/unit/doc-citations.test.ts).
 *
 * A bare `README` means the README of the package the citing file belongs to: tools/<name>/README.md
 * for files under tools/<name>/, the repository's README.md everywhere else.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Citation {
  /** The citing file, relative to the repository root. */
  file: string;
  line: number;
  /** The cited markdown file, relative to the repository root. */
  doc: string;
  heading: string;
}

/** Where citations are looked for (tools/<name>/src is added per package). */
export const CITING_ROOTS = ['src', 'activities', 'workflows', 'test', 'bench'];
const CITING_EXTENSIONS = /\.(ts|cts|mts|js|cjs|mjs)$/;

// The continuation of a comment onto its next line: newline, indentation, an optional `*` or `//`.
const WRAP = String.raw`\r?\n[ \t]*(?:\*|\/\/)?[ \t]*`;
const CITATION = new RegExp(
  String.raw`(?<![\w/.-])(README|docs\/[\w.-]+\.md)(?:[ \t]*${WRAP}|[ \t]*)"([^"\n]+(?:${WRAP}[^"\n]*)?)"`,
  'g',
);

/** The markdown file a citation names, seen from `file` (both relative to the repository root). */
export function citedDoc(file: string, cited: string): string {
  if (cited !== 'README') return cited;
  const parts = file.split(/[\\/]/);
  return parts[0] === 'tools' && parts.length > 2 ? `tools/${parts[1]}/README.md` : 'README.md';
}

/** Every citation in `text`, the content of `file`. */
export function findCitations(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const start = m.index ?? 0;
    found.push({
      file,
      line: text.slice(0, start).split('\n').length,
      doc: citedDoc(file, m[1]),
      heading: m[2].replace(new RegExp(`[ \\t]*${WRAP}`, 'g'), ' ').trim(),
    });
  }
  return found;
}

/** The headings (any level) of a markdown text, outside fenced code blocks. */
export function headingsOf(markdown: string): Set<string> {
  const headings = new Set<string>();
  let fenced = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) {
      const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (m) headings.add(m[1]);
    }
  }
  return headings;
}

/**
 * The citations whose file is missing or has no such heading, as `file:line: message` lines.
 * `readDoc` returns a markdown file's text, or undefined when it does not exist.
 */
export function brokenCitations(citations: Citation[], readDoc: (doc: string) => string | undefined): string[] {
  const headings = new Map<string, Set<string> | undefined>();
  const problems: string[] = [];
  for (const c of citations) {
    if (!headings.has(c.doc)) {
      const text = readDoc(c.doc);
      headings.set(c.doc, text === undefined ? undefined : headingsOf(text));
    }
    const known = headings.get(c.doc);
    if (known === undefined) problems.push(`${c.file}:${c.line}: cites ${c.doc}, which does not exist`);
    else if (!known.has(c.heading)) problems.push(`${c.file}:${c.line}: ${c.doc} has no heading "${c.heading}"`);
  }
  return problems;
}

function filesUnder(root: string, dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...filesUnder(root, rel));
    } else if (CITING_EXTENSIONS.test(entry.name)) out.push(rel);
  }
  return out;
}

/** Every citation in the repository's code (src, activities, workflows, tools/<name>/src, test, bench). */
export function repositoryCitations(root: string): Citation[] {
  const tools = fs.existsSync(path.join(root, 'tools'))
    ? fs.readdirSync(path.join(root, 'tools')).map((name) => path.join('tools', name, 'src'))
    : [];
  return [...CITING_ROOTS, ...tools]
    .flatMap((dir) => filesUnder(root, dir))
    .flatMap((file) => findCitations(file.split(path.sep).join('/'), fs.readFileSync(path.join(root, file), 'utf8')));
}

/** Reads a markdown file of the repository, or undefined when there is none. */
export function repositoryDocReader(root: string): (doc: string) => string | undefined {
  return (doc) => {
    const abs = path.join(root, doc);
    return fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : undefined;
  };
}
