/**
 * Worker-thread side of the QR renderer (see qr.ts): renders each job with the synchronous encoder
 * and answers with the data URL or an error message. One job at a time; the thread's own message
 * queue is the backlog.
 */
import { parentPort } from 'node:worker_threads';
import { renderQrDataUrlSync } from './qr-png';
import { errorMessage } from '../lib/error-message';

export interface QrJob {
  id: number;
  text: string;
}

export type QrJobResult = { id: number; ok: true; url: string } | { id: number; ok: false; message: string };

/** Everything a worker posts: one `ready` once the encoder has loaded, then one result per job. */
export type QrWorkerMessage = { ready: true } | QrJobResult;

const port = parentPort;
if (port) {
  port.on('message', (job: QrJob) => {
    let reply: QrJobResult;
    try {
      reply = { id: job.id, ok: true, url: renderQrDataUrlSync(job.text) };
    } catch (err) {
      reply = { id: job.id, ok: false, message: errorMessage(err) };
    }
    port.postMessage(reply);
  });
  const ready: QrWorkerMessage = { ready: true };
  port.postMessage(ready);
}
