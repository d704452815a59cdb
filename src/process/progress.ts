/**
 * Progress of long commands (`npm start`, the ops CLI's long runs, the benchmarks): one line on
 * stderr as each step begins, with the time since the command started, so a first start (initdb,
 * the workflow bundle) never looks stuck. stderr keeps stdout for logs, JSON results and the
 * start-up table.
 */
export type Progress = (step: string) => void;

export function stderrProgress(
  name = 'pixflow',
  write: (line: string) => void = (l) => process.stderr.write(l),
): Progress {
  const started = Date.now();
  return (step) => write(`[${name} +${((Date.now() - started) / 1000).toFixed(1)}s] ${step}\n`);
}

export const noProgress: Progress = () => undefined;
