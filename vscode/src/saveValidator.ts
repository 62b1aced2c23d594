// gpuemu.validateOnSave: saving a kernel or reference script runs `gpuemu test` on the ops that use
// it, debounced (a burst of saves makes one run) and cancelling the run a newer save makes stale.
import * as path from 'node:path';

import { Invocation, Project, invocation } from './commands';
import { ConfigOp } from './opsConfig';
import { ResultDocument } from './result';
import { Captured } from './run';

export const SAVE_DEBOUNCE_MS = 750;

// The ops that use `file`: kernel and reference script paths of the config (relative to its folder;
// a reference shared by several ops validates all of them) and the `source` paths of the last
// result (relative to the project root; they also cover callables).
export function opsForFile(
  file: string,
  project: Project,
  ops: ConfigOp[],
  result?: ResultDocument,
): string[] {
  const target = path.resolve(file);
  const found: string[] = [];
  const add = (op: string) => !found.includes(op) && found.push(op);
  const configDir = project.config !== undefined ? path.dirname(project.config) : project.root;
  for (const op of ops) {
    const files = [...op.kernelFiles, ...op.referenceFiles];
    if (files.some((k) => path.resolve(configDir, k) === target)) add(op.name);
  }
  for (const r of result?.ops ?? []) {
    const source = r.source.replace(/:\d+$/, '');
    if (source && path.resolve(project.root, source) === target) add(r.op);
  }
  return found;
}

// `gpuemu --format json test --op A --op B`: the fixed cases of those ops, result.json on stdout.
export function validateCommand(project: Project, ops: string[]): Invocation {
  return invocation(project, `validate ${ops.join(' ')}`, [
    '--format',
    'json',
    'test',
    ...ops.flatMap((o) => ['--op', o]),
  ]);
}

export type Runner = (invocation: Invocation, signal: AbortSignal) => Promise<Captured>;

export interface Validation {
  ops: string[];
  invocation: Invocation;
  outcome: { captured: Captured } | { cancelled: true } | { error: Error };
}

// Debounces saves and keeps at most one run: a save while a run is going aborts it (its outcome is
// `cancelled`), and the newest save's ops run once the debounce delay has passed quietly.
export class SaveValidator {
  private timer: NodeJS.Timeout | undefined;
  private pending = new Set<string>();
  private current: AbortController | undefined;

  constructor(
    private readonly runner: Runner,
    private readonly report: (v: Validation) => void,
    private readonly makeInvocation: (ops: string[]) => Invocation,
    private readonly delayMs = SAVE_DEBOUNCE_MS,
  ) {}

  saved(ops: string[]): void {
    if (ops.length === 0) return;
    ops.forEach((o) => this.pending.add(o));
    this.current?.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.start(), this.delayMs);
  }

  private async start(): Promise<void> {
    this.timer = undefined;
    const ops = [...this.pending];
    this.pending.clear();
    const controller = new AbortController();
    this.current = controller;
    const inv = this.makeInvocation(ops);
    let outcome: Validation['outcome'];
    try {
      const captured = await this.runner(inv, controller.signal);
      outcome = controller.signal.aborted ? { cancelled: true } : { captured };
    } catch (e) {
      outcome = controller.signal.aborted
        ? { cancelled: true }
        : { error: e instanceof Error ? e : new Error(String(e)) };
    }
    if (this.current === controller) this.current = undefined;
    this.report({ ops, invocation: inv, outcome });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.current?.abort();
  }
}
