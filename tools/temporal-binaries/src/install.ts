/**
 * `npm install`'s step (package.json "postinstall", through ../postinstall.cjs): puts the pinned
 * official Temporal binaries in the project folder, or says on one line why each could not be had.
 * It never fails the install: `npm start` and `npm test` ask again and stop with that line.
 */
import { resolveTemporalBinary, type TemporalBinaryName } from './binaries';
import { errorMessage } from '../../../src/lib/error-message';

const names: TemporalBinaryName[] = ['cli', 'test-server'];
for (const name of names) {
  try {
    const found = resolveTemporalBinary(name, { allowSdkDownload: false });
    if (found.kind === 'existing-path') console.log(`temporal ${name}: ${found.path} (${found.source})`);
  } catch (err) {
    console.warn(`temporal ${name}: ${errorMessage(err)}`);
  }
}
