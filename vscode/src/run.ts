// Running gpuemu without a terminal (the lint command reads its JSON), finding the binary before a
// task starts, and what gpuemu's exit codes mean (docs/commands.md).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { Invocation } from './commands';
import { LintReport, ResultError, parseLintReport } from './result';

export interface Captured {
  code: number | null; // null when a signal ended it
  stdout: string;
  stderr: string;
}

// Runs `invocation` to completion with its stdout and stderr captured. Rejects only when the process
// could not start (ENOENT, EACCES); any exit code resolves.
// An AbortSignal stops the process (SIGTERM) and rejects with an
// error named AbortError.
export function runCaptured(
  invocation: Invocation,
  env?: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<Captured> {
  return new Promise((resolve, reject) => {
    execFile(
      invocation.command,
      invocation.args,
      {
        cwd: invocation.cwd,
        env: env ?? process.env,
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
        ...(signal ? { signal } : {}),
      },
      (error, stdout, stderr) => {
        if (error && error.name === 'AbortError') {
          reject(error);
          return;
        }
        if (error && typeof error.code === 'string') {
          reject(new Error(`cannot run ${invocation.command}: ${error.message}`));
          return;
        }
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

// docs/commands.md: 0 passed, 1 a check failed, 2 usage or configuration error, 3 environment error.
export function exitMeaning(code: number | null | undefined): string {
  switch (code) {
    case 0:
      return 'passed';
    case 1:
      return 'a check failed';
    case 2:
      return 'usage or configuration error';
    case 3:
      return 'environment or internal error';
    case null:
    case undefined:
      return 'did not exit normally';
    default:
      return `unexpected exit code ${code}`;
  }
}

// The report of `gpuemu lint --format json`, which exits 0 (clean) or 1 (violations); any other exit
// is an error whose message carries the end of gpuemu's stderr.
export function lintOutcome(captured: Captured, name: string): LintReport {
  if (captured.code !== 0 && captured.code !== 1) {
    const tail = captured.stderr.trim().split('\n').slice(-5).join('\n');
    throw new ResultError(`gpuemu lint failed (${exitMeaning(captured.code)})${tail ? `:\n${tail}` : ''}`);
  }
  return parseLintReport(captured.stdout, name);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// The file a binary setting names: a path as is, a bare name through PATH (and PATHEXT on
// Windows); undefined when there is none, so the extension can say so before a task fails.
export function locateBinary(binary: string, envPath = process.env.PATH ?? ''): string | undefined {
  if (path.isAbsolute(binary)) return isExecutable(binary) ? binary : undefined;
  const extensions =
    process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE').split(';')] : [''];
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of extensions) {
      const candidate = path.join(dir, binary + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}
