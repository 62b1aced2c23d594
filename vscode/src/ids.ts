// The names package.json contributes and extension.ts registers: one list, checked against the
// manifest by the tests.

export const COMMANDS = {
  runCi: 'gpuemu.runCi',
  reproduce: 'gpuemu.reproduce',
  minimize: 'gpuemu.minimize',
  lint: 'gpuemu.lint',
  reloadResult: 'gpuemu.reloadResult',
  // Internal: the "Replay" / "Minimize" code actions of a diagnostic; not in the command palette.
  replayFinding: 'gpuemu.replayFinding',
  minimizeFinding: 'gpuemu.minimizeFinding',
} as const;

// Commands that package.json lists under contributes.commands, with their titles.
export const PALETTE_COMMANDS: Record<string, string> = {
  [COMMANDS.runCi]: 'Run CI gate',
  [COMMANDS.reproduce]: 'Reproduce failure',
  [COMMANDS.minimize]: 'Minimize failure',
  [COMMANDS.lint]: 'Lint kernels',
  [COMMANDS.reloadResult]: 'Reload result.json',
};

export const SECTION = 'gpuemu';
export const SETTINGS = ['binaryPath', 'configPath', 'resultPath'] as const;
// Settings that are not strings, with their defaults.
export const BOOLEAN_SETTINGS = { validateOnSave: true } as const;
export const TEST_CONTROLLER = 'gpuemu';

export const TASK_TYPE = 'gpuemu';
export const PROBLEM_MATCHER = '$gpuemu-config';
export const DIAGNOSTIC_SOURCE = 'gpuemu';
