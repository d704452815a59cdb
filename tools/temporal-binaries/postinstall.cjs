// package.json "postinstall": fetches the pinned official Temporal binaries (src/install.ts) in a
// development install. A production install (`npm ci --omit=dev`, the image) has no tsx and needs no
// local Temporal: it connects to TEMPORAL_ADDRESS, so this step does nothing there.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

let tsx;
try {
  tsx = require.resolve('tsx/cjs');
} catch {
  process.exit(0);
}
if (process.env.PIXFLOW_SKIP_TEMPORAL_BINARIES === '1') process.exit(0);
spawnSync(process.execPath, ['--require', tsx, path.join(__dirname, 'src', 'install.ts')], {
  stdio: 'inherit',
});
// Whatever happened was said on one line above; the install goes on.
