/**
 * Thread entry of `startSimulatorThread`: the acquirer simulator's HTTP server and state on a
 * thread of their own, its sandbox control served to the main thread
 * (docs/performance.md "Where a charge's time goes").
 */
import { workerData } from 'node:worker_threads';
import { serveThreadRpc } from '../../lib/threads';
import { sandboxControlOf } from '../sandbox-control';
import { startAcquirerSimulator, type SimulatorOptions } from './server';

serveThreadRpc(async () => {
  const simulator = await startAcquirerSimulator(workerData as SimulatorOptions);
  const control = sandboxControlOf(simulator.control);
  return {
    handlers: { ...control },
    info: { url: simulator.url },
    close: () => simulator.close(),
  };
});
