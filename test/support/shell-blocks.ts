/**
 * The shell blocks of the repository's markdown (docs/testing.md "Commands in the docs"): every
 * ```sh or ```bash block, with the `<!-- not-run: <reason> -->` marker before it, if any.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const NOT_RUN = /^<!-- not-run: (.+?) -->$/;

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** Why it is not run here, from the marker before it. */
  notRun?: string;
}

/** Every ```sh or ```bash block of a markdown file (path relative to the repository). */
export function shellBlocks(file: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i] ?? '')) continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `${file}:${i + 1}: the block is closed`);
    let before = i - 1;
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--;
    const marker = NOT_RUN.exec(lines[before]?.trim() ?? '');
    out.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n'), notRun: marker?.[1] });
    i = end;
  }
  return out;
}
