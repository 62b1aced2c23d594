// The gpuemu command lines the extension runs, as argument arrays (never shell strings), and the
// project they run in, resolved from the gpuemu.* settings and the workspace folder.
import * as os from 'node:os';
import * as path from 'node:path';

import { Finding } from './findings';
import { isSeed } from './result';

export interface Settings {
  binaryPath: string; // gpuemu.binaryPath
  configPath: string; // gpuemu.configPath; empty: discovered
  resultPath: string; // gpuemu.resultPath
}

export const DEFAULT_SETTINGS: Readonly<Settings> = {
  binaryPath: 'gpuemu',
  configPath: '',
  resultPath: 'gpuemu-out/result.json',
};

export interface Project {
  workspaceFolder: string;
  binary: string; // an absolute path, or a bare name looked up in PATH
  config?: string; // the absolute gpuemu.toml, passed as --config; absent: gpuemu finds it from cwd
  root: string; // the project root: relative paths in result.json are relative to it
  resultFile: string; // the watched result.json
  outDir: string; // `ci run --out`: the result file's directory
}

export interface Invocation {
  command: string;
  args: string[];
  cwd: string;
  title: string; // the task's name, e.g. "ci run"
}

// `${workspaceFolder}` and `${userHome}` in a setting, as VS Code users write them in tasks.json.
export function expandVariables(value: string, workspaceFolder: string): string {
  return value.replace(/\$\{workspaceFolder\}/g, workspaceFolder).replace(/\$\{userHome\}/g, os.homedir());
}

// A bare name ("gpuemu") stays for the PATH lookup; a path with a separator is relative to the
// workspace folder.
export function resolveBinary(setting: string, workspaceFolder: string): string {
  const value = expandVariables(setting.trim() || DEFAULT_SETTINGS.binaryPath, workspaceFolder);
  if (path.isAbsolute(value)) return path.normalize(value);
  if (value.includes('/') || value.includes(path.sep)) return path.resolve(workspaceFolder, value);
  return value;
}

// `discoveredConfig` is the gpuemu.toml the extension found in the workspace, used when
// gpuemu.configPath is empty.
export function resolveProject(
  settings: Settings,
  workspaceFolder: string,
  discoveredConfig?: string,
): Project {
  const configSetting = settings.configPath.trim();
  const config = configSetting
    ? path.resolve(workspaceFolder, expandVariables(configSetting, workspaceFolder))
    : discoveredConfig;
  const resultSetting = settings.resultPath.trim() || DEFAULT_SETTINGS.resultPath;
  const resultFile = path.resolve(workspaceFolder, expandVariables(resultSetting, workspaceFolder));
  return {
    workspaceFolder,
    binary: resolveBinary(settings.binaryPath, workspaceFolder),
    ...(config !== undefined ? { config } : {}),
    root: config !== undefined ? path.dirname(config) : workspaceFolder,
    resultFile,
    outDir: path.dirname(resultFile),
  };
}

export function invocation(project: Project, title: string, args: string[]): Invocation {
  const config = project.config !== undefined ? ['--config', project.config] : [];
  return { command: project.binary, args: [...config, ...args], cwd: project.root, title };
}

function checkedSeed(seed: string): string {
  if (!isSeed(seed)) throw new Error(`"${seed}" is not a gpuemu seed (a decimal integer below 2^64)`);
  return seed;
}

// `gpuemu ci run --out DIR`: the gate, writing the watched result.json and the other reports.
export function ciRunCommand(project: Project): Invocation {
  return invocation(project, 'ci run', ['ci', 'run', '--out', project.outDir]);
}

// `gpuemu reproduce SEED --op OP`. The seed stays a string: seeds above 2^53 lose digits as numbers.
export function reproduceCommand(project: Project, seed: string, op: string): Invocation {
  return invocation(project, `reproduce ${seed}`, ['reproduce', checkedSeed(seed), '--op', op]);
}

export function minimizeCommand(project: Project, seed: string, op: string): Invocation {
  return invocation(project, `minimize ${seed}`, ['minimize', checkedSeed(seed), '--op', op]);
}

// `gpuemu lint [--kernel NAME]`; with `json`, the document of docs/lint.md on stdout.
export function lintCommand(project: Project, options: { kernel?: string; json?: boolean } = {}): Invocation {
  const format = options.json ? ['--format', 'json'] : [];
  const kernel = options.kernel !== undefined ? ['--kernel', options.kernel] : [];
  return invocation(project, options.kernel !== undefined ? `lint ${options.kernel}` : 'lint', [
    ...format,
    'lint',
    ...kernel,
  ]);
}

// What "Replay" runs for a finding: the worst case's reproduce, a violation's lint of its kernel;
// undefined for a baseline regression, which no single command replays.
export function replayCommand(project: Project, finding: Finding): Invocation | undefined {
  if (finding.violation) return lintCommand(project, { kernel: finding.op });
  if (finding.worst) return reproduceCommand(project, finding.worst.seed, finding.op);
  return undefined;
}

// An argument list shown to a person (the output channel), quoted for a POSIX shell.
export function formatCommandLine(command: string, args: readonly string[]): string {
  const quote = (arg: string) =>
    /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
  return [command, ...args].map(quote).join(' ');
}

// The command line as the reports print it, without the --config the extension adds:
// "gpuemu reproduce 123 --op softmax".
export function displayCommandLine(invocation: Invocation): string {
  const args = invocation.args[0] === '--config' ? invocation.args.slice(2) : invocation.args;
  return formatCommandLine('gpuemu', args);
}
