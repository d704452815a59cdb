/** Reading the process's Prometheus counters in tests (src/observability/metrics.ts). */
import { renderMetrics } from '../../src/observability/metrics';

/** The value of one series in a Prometheus text exposition (0 when absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return 0;
}

/** The current value of one counter series of this process. */
export async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
  return sample((await renderMetrics()).body, name, labels);
}
