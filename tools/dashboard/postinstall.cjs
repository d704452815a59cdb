// package.json "postinstall": builds the merchants' dashboard (src/build.ts) in a development install.
// A production install (`npm ci --omit=dev`) has neither tsx nor esbuild: the image builds it in its
// build stage instead, so this step does nothing there. A failed build is said on one line; the
// install goes on and `npm start` tries again.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

let tsx;
try {
  tsx = require.resolve('tsx/cjs');
  require.resolve('esbuild');
} catch {
  process.exit(0);
}
spawnSync(process.execPath, ['--require', tsx, path.join(__dirname, 'src', 'build.ts')], { stdio: 'inherit' });
