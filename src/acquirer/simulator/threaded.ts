/**
 * The acquirer simulator on a worker thread (docs/performance.md "Where a charge's time goes"): a real acquirer
 * is another machine, and in-process its side of every protocol call (routing, validation, the BR
 * Code, the answer) ran on the API's event loop. Here the API talks HTTP to it as to any acquirer,
 * and the sandbox drives it through `SandboxControl` messages.
 */
import path from 'node:path';
import { ThreadRpc } from '../../lib/threads';
import type { SandboxControl } from '../sandbox-control';
import type { SimulatorOptions } from './server';

export interface ThreadedSimulator {
  url: string;
  control: SandboxControl;
  close(): Promise<void>;
}

/** `opts` crosses to the thread, so it holds data only (no logger). */
export async function startSimulatorThread(opts: Omit<SimulatorOptions, 'logger'>): Promise<ThreadedSimulator> {
  const rpc = await ThreadRpc.start(path.join(__dirname, 'thread'), __filename, {
    name: 'acquirer-simulator',
    workerData: opts,
  });
  const { url } = rpc.info as { url: string };
  const call = <T>(method: keyof SandboxControl, args: unknown[]): Promise<T> => rpc.call<T>(method, args);
  return {
    url,
    control: {
      payCob: (txid, o) => call('payCob', [txid, o]),
      finishTransfer: (id, outcome, reason) => call('finishTransfer', [id, outcome, reason]),
      raiseInfraction: (e2eId, reason, o) => call('raiseInfraction', [e2eId, reason, o]),
      decideInfraction: (id, decision) => call('decideInfraction', [id, decision]),
      setKeyStatus: (id, status) => call('setKeyStatus', [id, status]),
      setCallbackBaseUrl: (u) => call('setCallbackBaseUrl', [u]),
      recurrence: (action, idRec, o) => call('recurrence', [action, idRec, o]),
    },
    close: () => rpc.close(),
  };
}
