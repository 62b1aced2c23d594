// For the tests: the real gpuemu binary ($GPUEMU_BIN, else the repository's build/gpuemu) and
// throwaway projects made from the end-to-end suite's scripts (tests/e2e/scripts).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { Invocation } from '../commands';

// vscode/out/testsupport -> the repository root.
export const REPO = path.resolve(__dirname, '..', '..', '..');
const SCRIPTS = path.join(REPO, 'tests', 'e2e', 'scripts');
const KERNELS = path.join(REPO, 'tests', 'kernels');

// The binary under test; throws (failing the suite) when there is none, saying how to get one.
export function gpuemuBinary(): string {
  const fromEnv = process.env.GPUEMU_BIN;
  const binary = fromEnv ? path.resolve(fromEnv) : path.join(REPO, 'build', 'gpuemu');
  if (!fs.existsSync(binary)) {
    const origin = fromEnv ? `$GPUEMU_BIN (${fromEnv})` : `${binary} ($GPUEMU_BIN is not set)`;
    throw new Error(
      `gpuemu binary not found: ${origin} does not exist; build it (scripts/setup.sh) or set GPUEMU_BIN`,
    );
  }
  return binary;
}

// The environment of every gpuemu the tests start: a store of the project's own, no user config
// from the developer's machine, no CUDA tools (lint reads the PTX alone), and no leak report from a
// sanitizer build turning an exit code into 23 (the leak checks belong to the C++ unit tests).
export function gpuemuEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GPUEMU_HOME: path.join(root, '.gpuemu-home'), HOME: root };
  for (const tool of ['GPUEMU_PTXAS', 'GPUEMU_NVCC', 'GPUEMU_CUOBJDUMP', 'GPUEMU_NVDISASM'])
    env[tool] = 'none';
  env.ASAN_OPTIONS = (env.ASAN_OPTIONS ?? '').replace('detect_leaks=1', 'detect_leaks=0');
  delete env.GITHUB_ACTIONS;
  return env;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gpuemu-vscode-${prefix}-`));
}

// Writes gpuemu.toml and copies the named scripts (and the protocol codec they import) into `root`.
export function writeProject(root: string, toml: string, scripts: string[], kernels: string[] = []): string {
  for (const name of ['_proto.py', ...scripts])
    fs.copyFileSync(path.join(SCRIPTS, name), path.join(root, name));
  if (kernels.length > 0) fs.mkdirSync(path.join(root, 'kernels'), { recursive: true });
  for (const name of kernels) fs.copyFileSync(path.join(KERNELS, name), path.join(root, 'kernels', name));
  const config = path.join(root, 'gpuemu.toml');
  fs.writeFileSync(config, toml);
  return config;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Runs an invocation the way a task does: the command and its argument array, no shell.
export function run(invocation: Invocation, env: NodeJS.ProcessEnv): Ran {
  const proc = spawnSync(invocation.command, invocation.args, {
    cwd: invocation.cwd,
    env,
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (proc.error) throw proc.error;
  return { code: proc.status, stdout: proc.stdout, stderr: proc.stderr };
}

// A project like tests/e2e/e2e_support.py's one_op_toml, with `ops` as [[ops]] entries.
export function projectToml(ops: string, extra = ''): string {
  return `[project]
name = "vscode-e2e"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 5
test_cases = 2

[ci]
fuzz_iterations = 3
parallel_jobs = 2
${ops}
${extra}`;
}

export function opToml(name: string, script: string, source?: string): string {
  return `
[[ops]]
name = "${name}"
op_script = "${script}"
reference = "ref_identity.py"
${source !== undefined ? `source = "${source}"` : ''}

[ops.schema]
dims = { M = [1, 8], N = [1, 70] }
inputs = { x = ["M", "N"] }
`;
}
