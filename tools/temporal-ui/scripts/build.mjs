// Builds the UI into ./build (static files; the embedded Temporal server serves them, README.md).
//   node scripts/build.mjs            build now
//   node scripts/build.mjs --check    exit 0 if ./build is up to date, 10 if it is missing or stale
//   node scripts/build.mjs --if-stale build only when missing or stale
// "Up to date": ./build/.build-stamp holds the hash of everything the build reads (our shell's files
// and the versions of the packages that make the bundle), written after a build succeeds.
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(here, 'build');
const stampFile = path.join(out, '.build-stamp');

/** A package's folder: in this package's node_modules or hoisted to a parent's (npm workspaces). */
function packageDir(name) {
  for (let dir = here; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${name} is not installed: run npm install at the repo root`);
  }
}

function files(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

function stamp() {
  const hash = createHash('sha256');
  const inputs = [
    'package.json',
    'svelte.config.js',
    'vite.config.js',
    'tailwind.config.cjs',
    'scripts/build.mjs',
    ...files(path.join(here, 'src')).map((f) => path.relative(here, f)),
  ];
  for (const f of inputs)
    hash
      .update(`${f}\0`)
      .update(fs.readFileSync(path.join(here, f)))
      .update('\0');
  const pkgs = ['@temporalio/ui', '@sveltejs/kit', '@sveltejs/adapter-static', 'svelte', 'vite', 'tailwindcss'];
  for (const name of pkgs) {
    const { version } = JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8'));
    hash.update(`${name}@${version}\0`);
  }
  return hash.digest('hex');
}

function upToDate(want) {
  try {
    return fs.existsSync(path.join(out, 'index.html')) && fs.readFileSync(stampFile, 'utf8').trim() === want;
  } catch {
    return false;
  }
}

const mode = process.argv[2];
const want = stamp();
if (mode === '--check') process.exit(upToDate(want) ? 0 : 10);
if (mode === '--if-stale' && upToDate(want)) process.exit(0);

// One build at a time per checkout (two `npm start`s may both find it stale): the lock holds the builder's pid.
const lockFile = path.join(here, '.build.lock');
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
for (let said = false; ;) {
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    break;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    const holder = Number(fs.readFileSync(lockFile, 'utf8'));
    if (!(holder > 0) || !alive(holder)) {
      fs.rmSync(lockFile, { force: true });
      continue;
    }
    if (!said) process.stdout.write(`temporal-ui: waiting for the build in progress (pid ${holder})\n`);
    said = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
process.on('exit', () => fs.rmSync(lockFile, { force: true }));
// Another process may have built it while this one waited.
if (mode === '--if-stale' && upToDate(want)) process.exit(0);

const t0 = Date.now();
process.stdout.write('temporal-ui: building the Temporal UI into tools/temporal-ui/build ...\n');
fs.rmSync(stampFile, { force: true });
const vite = path.join(packageDir('vite'), 'bin', 'vite.js');
const child = spawn(process.execPath, [vite, 'build'], {
  cwd: here,
  stdio: 'inherit',
  env: { ...process.env, VITE_API: '', NODE_ENV: 'production' },
});
// Stopped (npm start shutting down): stop vite too, and leave no stamp.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
if (code !== 0) {
  process.stderr.write(`temporal-ui: build failed (${signal ?? `exit ${code}`})\n`);
  process.exit(1);
}
// The licences of what the bundle carries: the UI (MIT) and its two font families (OFL-1.1).
for (const [name, as] of [
  ['@temporalio/ui', 'LICENSE.temporal-ui.txt'],
  ['@fontsource-variable/inter', 'LICENSE.font-inter.txt'],
  ['@fontsource/noto-sans-mono', 'LICENSE.font-noto-sans-mono.txt'],
]) {
  fs.copyFileSync(path.join(packageDir(name), 'LICENSE'), path.join(out, as));
}
fs.writeFileSync(stampFile, `${want}\n`);
process.stdout.write(`temporal-ui: built in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
