// The VS Code side of the extension: wires the pure modules (result, findings, diagnostics, commands,
// status) into commands, tasks, the Problems panel, code actions, a file watcher and the status bar.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

import {
  Invocation,
  Project,
  Settings,
  ciRunCommand,
  displayCommandLine,
  formatCommandLine,
  lintCommand,
  minimizeCommand,
  replayCommand,
  reproduceCommand,
  resolveProject,
} from './commands';
import { DiagnosticSpec, byFile, diagnosticsFor } from './diagnostics';
import { Finding, casePicks, collectFindings, label } from './findings';
import { COMMANDS, DIAGNOSTIC_SOURCE, PROBLEM_MATCHER, SECTION, TASK_TYPE } from './ids';
import { LintReport, ResultDocument, ResultError, parseResult } from './result';
import { exitMeaning, lintOutcome, locateBinary, runCaptured } from './run';
import { SaveValidator, opsForFile, validateCommand } from './saveValidator';
import { Status, missingStatus, resultStatus, unreadableStatus } from './status';
import { TestExplorer } from './testExplorer';

// What the extension knows about the current project and its last result.
class State {
  project: Project | undefined;
  folder: vscode.WorkspaceFolder | undefined;
  result: ResultDocument | undefined;
  lint: LintReport | undefined; // a `Lint kernels` run newer than the result's ci.lint
  specs: DiagnosticSpec[] = [];
}

export function activate(context: vscode.ExtensionContext): void {
  const state = new State();
  const output = vscode.window.createOutputChannel('gpuemu');
  const diagnostics = vscode.languages.createDiagnosticCollection(DIAGNOSTIC_SOURCE);
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = 'workbench.actions.view.problems';
  let watcher: vscode.FileSystemWatcher | undefined;
  let reloadTimer: NodeJS.Timeout | undefined;
  context.subscriptions.push(output, diagnostics, status, { dispose: () => watcher?.dispose() });
  const explorer = new TestExplorer(() => state.project, output);
  let configWatcher: vscode.FileSystemWatcher | undefined;
  context.subscriptions.push(explorer, { dispose: () => configWatcher?.dispose() });

  const showStatus = (s: Status) => {
    status.text = s.text;
    status.tooltip = s.tooltip;
    const background = {
      failed: 'statusBarItem.errorBackground',
      unreadable: 'statusBarItem.warningBackground',
    };
    const color = s.state === 'failed' || s.state === 'unreadable' ? background[s.state] : undefined;
    status.backgroundColor = color ? new vscode.ThemeColor(color) : undefined;
    status.show();
  };

  const publish = () => {
    diagnostics.clear();
    state.specs = [];
    const project = state.project;
    if (!project || (!state.result && !state.lint)) return;
    const findings = collectFindings(state.result, state.lint);
    const configText = project.config ? readText(project.config) : undefined;
    state.specs = diagnosticsFor(findings, { root: project.root, config: project.config, configText });
    for (const [file, specs] of byFile(state.specs)) {
      diagnostics.set(vscode.Uri.file(file), specs.map(toDiagnostic));
    }
    if (state.result) showStatus(resultStatus(state.result, findings, project.resultFile));
  };

  const reload = async () => {
    const project = state.project;
    if (!project) return;
    let text: string;
    try {
      text = await fs.promises.readFile(project.resultFile, 'utf8');
    } catch (e) {
      state.result = undefined;
      publish();
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      showStatus(
        missing ? missingStatus(project.resultFile) : unreadableStatus(`${project.resultFile}: ${String(e)}`),
      );
      return;
    }
    try {
      state.result = parseResult(text, project.resultFile);
      state.lint = undefined; // the new result's ci.lint is the newer lint
      explorer.publish(state.result, path.basename(project.resultFile));
    } catch (e) {
      state.result = undefined;
      const message = e instanceof Error ? e.message : String(e);
      output.appendLine(message);
      publish();
      showStatus(unreadableStatus(message));
      return;
    }
    publish();
  };

  const scheduleReload = () => {
    if (reloadTimer) clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void reload(), 300);
  };
  context.subscriptions.push({ dispose: () => reloadTimer && clearTimeout(reloadTimer) });

  const setup = async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    state.folder = folder;
    watcher?.dispose();
    watcher = undefined;
    if (!folder) {
      state.project = undefined;
      return;
    }
    const settings = readSettings(folder);
    const discovered = settings.configPath.trim() ? undefined : await discoverConfig(folder);
    state.project = resolveProject(settings, folder.uri.fsPath, discovered);
    const resultFile = state.project.resultFile;
    // Inside the folder the workspace's recursive watcher sees gpuemu-out/ appear on the first run; a
    // result elsewhere is watched in its own directory.
    const relative = path.relative(folder.uri.fsPath, resultFile);
    const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
    watcher = vscode.workspace.createFileSystemWatcher(
      inside
        ? new vscode.RelativePattern(folder, relative.split(path.sep).join('/'))
        : new vscode.RelativePattern(vscode.Uri.file(path.dirname(resultFile)), path.basename(resultFile)),
    );
    watcher.onDidCreate(scheduleReload);
    watcher.onDidChange(scheduleReload);
    watcher.onDidDelete(scheduleReload);
    configWatcher?.dispose();
    configWatcher = undefined;
    if (state.project.config) {
      configWatcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(
          vscode.Uri.file(path.dirname(state.project.config)),
          path.basename(state.project.config),
        ),
      );
      configWatcher.onDidChange(() => explorer.refresh(state.result));
      configWatcher.onDidCreate(() => explorer.refresh(state.result));
    }
    explorer.refresh();
    await reload();
  };

  // gpuemu.validateOnSave: `gpuemu test` on the ops of a saved kernel or reference script, shown in the
  // Test Explorer.
  const validator = new SaveValidator(
    (invocation, signal) => runCaptured(invocation, undefined, signal),
    (v) => {
      if ('cancelled' in v.outcome) {
        output.appendLine(`gpuemu: validation of ${v.ops.join(', ')} cancelled by a newer save`);
      } else if ('error' in v.outcome) {
        output.appendLine(`gpuemu: validation of ${v.ops.join(', ')}: ${v.outcome.error.message}`);
      } else if (v.outcome.captured.code === 0 || v.outcome.captured.code === 1) {
        try {
          explorer.publish(
            parseResult(v.outcome.captured.stdout, v.invocation.title),
            `validate on save: ${v.ops.join(', ')}`,
          );
        } catch (e) {
          output.appendLine(String(e));
        }
      } else {
        output.append(v.outcome.captured.stderr);
        void vscode.window.showErrorMessage(
          `gpuemu validation of ${v.ops.join(', ')} failed: ${exitMeaning(v.outcome.captured.code)} (see the gpuemu output).`,
        );
      }
    },
    (ops) => validateCommand(state.project!, ops),
  );
  context.subscriptions.push(
    validator,
    vscode.workspace.onDidSaveTextDocument((document) => {
      const project = state.project;
      if (!project || !state.folder) return;
      const settings = vscode.workspace.getConfiguration(SECTION, state.folder.uri);
      if (!settings.get<boolean>('validateOnSave', true)) return;
      const ops = opsForFile(document.uri.fsPath, project, explorer.ops, state.result);
      if (ops.length > 0 && locateBinary(project.binary)) validator.saved(ops);
    }),
  );

  // Runs a gpuemu command line in the terminal panel, as a task with an argument array (no shell).
  const runTask = async (invocation: Invocation, afterwards?: () => void) => {
    const project = requireProject();
    if (!project || !state.folder || !checkBinary(project)) return;
    output.appendLine(
      `$ ${formatCommandLine(invocation.command, invocation.args)}    (in ${invocation.cwd})`,
    );
    const task = new vscode.Task(
      { type: TASK_TYPE, args: invocation.args },
      state.folder,
      invocation.title,
      'gpuemu',
      new vscode.ProcessExecution(invocation.command, invocation.args, { cwd: invocation.cwd }),
      [PROBLEM_MATCHER],
    );
    task.presentationOptions = {
      reveal: vscode.TaskRevealKind.Always,
      clear: true,
      panel: vscode.TaskPanelKind.Dedicated,
    };
    const execution = await vscode.tasks.executeTask(task);
    // Disposed when the task ends; a task that never ends keeps one idle listener.
    const ended = vscode.tasks.onDidEndTaskProcess((event) => {
      if (event.execution !== execution) return;
      ended.dispose();
      output.appendLine(
        `gpuemu ${invocation.title}: exit ${String(event.exitCode)} (${exitMeaning(event.exitCode)})`,
      );
      if (event.exitCode !== 0 && event.exitCode !== 1) {
        void vscode.window.showErrorMessage(
          `gpuemu ${invocation.title} failed: ${exitMeaning(event.exitCode)}. The terminal shows gpuemu's message.`,
        );
      }
      afterwards?.();
    });
  };

  const checkBinary = (project: Project): boolean => {
    if (locateBinary(project.binary)) return true;
    const where = path.isAbsolute(project.binary)
      ? `${project.binary} does not exist or is not executable`
      : `'${project.binary}' is not on PATH`;
    void vscode.window.showErrorMessage(
      `gpuemu: ${where}. Build or install gpuemu, or set gpuemu.binaryPath (e.g. build/gpuemu).`,
    );
    return false;
  };

  const pickCase = async (verb: string) => {
    if (!state.result) {
      await reload();
      if (!state.result) {
        void vscode.window.showWarningMessage(
          `gpuemu: no readable result at ${state.project?.resultFile ?? 'gpuemu.resultPath'}; run gpuemu: Run CI gate first.`,
        );
        return undefined;
      }
    }
    const picks = casePicks(collectFindings(state.result));
    if (picks.length === 0) {
      void vscode.window.showInformationMessage('gpuemu: the last result has no failing case.');
      return undefined;
    }
    const items = picks.map((p) => ({
      label: `${p.worst ? '$(error)' : '$(circle-small)'} ${p.op}[${p.dtype}] seed ${p.seed}`,
      description: p.kind,
      detail: p.message,
      pick: p,
    }));
    const chosen = await vscode.window.showQuickPick(items, {
      title: `gpuemu: ${verb} a failing case (worst first)`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    return chosen?.pick;
  };

  const findingOf = (rank: unknown): Finding | undefined =>
    typeof rank === 'number' ? state.specs.find((s) => s.rank === rank)?.finding : undefined;

  const register = (id: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));

  // The project a command works on; without one (no folder open) says so.
  const requireProject = (): Project | undefined => {
    if (!state.project)
      void vscode.window.showErrorMessage('gpuemu: open a folder with a gpuemu.toml first.');
    return state.project;
  };

  register(COMMANDS.runCi, async () => {
    const project = requireProject();
    if (project) await runTask(ciRunCommand(project), () => void reload());
  });
  register(COMMANDS.reproduce, async () => {
    const project = requireProject();
    const pick = project ? await pickCase('Reproduce') : undefined;
    if (project && pick) await runTask(reproduceCommand(project, pick.seed, pick.op));
  });
  register(COMMANDS.minimize, async () => {
    const project = requireProject();
    const pick = project ? await pickCase('Minimize') : undefined;
    if (project && pick) await runTask(minimizeCommand(project, pick.seed, pick.op));
  });
  register(COMMANDS.replayFinding, async (rank) => {
    const finding = findingOf(rank);
    const invocation = finding && state.project ? replayCommand(state.project, finding) : undefined;
    if (invocation) await runTask(invocation);
  });
  register(COMMANDS.minimizeFinding, async (rank) => {
    const finding = findingOf(rank);
    if (finding?.worst && state.project)
      await runTask(minimizeCommand(state.project, finding.worst.seed, finding.op));
  });
  register(COMMANDS.reloadResult, () => reload());
  register(COMMANDS.lint, async () => {
    const project = requireProject();
    if (!project || !checkBinary(project)) return;
    const invocation = lintCommand(project, { json: true });
    output.appendLine(
      `$ ${formatCommandLine(invocation.command, invocation.args)}    (in ${invocation.cwd})`,
    );
    try {
      const captured = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'gpuemu lint' },
        () => runCaptured(invocation),
      );
      if (captured.stderr) output.append(captured.stderr);
      state.lint = lintOutcome(captured, 'gpuemu lint --format json');
      publish();
      const violations = state.lint.kernels.reduce((n, k) => n + k.violations.length, 0);
      const failing = state.lint.kernels.filter((k) => !k.passed).length;
      void vscode.window.showInformationMessage(
        violations === 0
          ? `gpuemu lint: ${state.lint.kernels.length} kernel(s), no violation.`
          : `gpuemu lint: ${failing} of ${state.lint.kernels.length} kernel(s) fail, ${violations} violation(s) in the Problems panel.`,
      );
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      output.appendLine(message);
      void vscode.window.showErrorMessage(e instanceof ResultError ? message : `gpuemu lint: ${message}`);
    }
  });

  context.subscriptions.push(
    vscode.languages.registerCodeActionsProvider(
      { scheme: 'file' },
      { provideCodeActions: (document, _range, ctx) => codeActions(state, document, ctx) },
      { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) void setup().catch((e) => output.appendLine(String(e)));
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(
      () => void setup().catch((e) => output.appendLine(String(e))),
    ),
  );

  void setup().catch((e) => output.appendLine(`gpuemu: setup failed: ${String(e)}`));
}

export function deactivate(): void {}

function readSettings(folder: vscode.WorkspaceFolder): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, folder.uri);
  return {
    binaryPath: config.get<string>('binaryPath', 'gpuemu'),
    configPath: config.get<string>('configPath', ''),
    resultPath: config.get<string>('resultPath', 'gpuemu-out/result.json'),
  };
}

// gpuemu.toml in the folder itself, else the first one in the workspace (outside build trees).
async function discoverConfig(folder: vscode.WorkspaceFolder): Promise<string | undefined> {
  const direct = path.join(folder.uri.fsPath, 'gpuemu.toml');
  if (fs.existsSync(direct)) return direct;
  const found = await vscode.workspace.findFiles(
    new vscode.RelativePattern(folder, '**/gpuemu.toml'),
    '**/{node_modules,.git,build*}/**',
    1,
  );
  return found[0]?.fsPath;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function toDiagnostic(spec: DiagnosticSpec): vscode.Diagnostic {
  const range = new vscode.Range(spec.line, 0, spec.line, Number.MAX_SAFE_INTEGER);
  const severity =
    spec.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
  const diagnostic = new vscode.Diagnostic(range, spec.message, severity);
  diagnostic.source = DIAGNOSTIC_SOURCE;
  diagnostic.code = spec.code;
  return diagnostic;
}

// "Replay" (and "Minimize" for a failing case) on gpuemu's diagnostics. VS Code hands the provider
// copies of the diagnostics, so they are matched to findings by file, line and message.
function codeActions(
  state: State,
  document: vscode.TextDocument,
  context: vscode.CodeActionContext,
): vscode.CodeAction[] {
  const actions: vscode.CodeAction[] = [];
  for (const diagnostic of context.diagnostics) {
    if (diagnostic.source !== DIAGNOSTIC_SOURCE) continue;
    const spec = state.specs.find(
      (s) =>
        s.line === diagnostic.range.start.line &&
        s.message === diagnostic.message &&
        vscode.Uri.file(s.file).toString() === document.uri.toString(),
    );
    if (!spec || !state.project) continue;
    const replay = replayCommand(state.project, spec.finding);
    if (replay) {
      const title = `Replay ${label(spec.finding)}: ${displayCommandLine(replay)}`;
      const action = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
      action.command = { command: COMMANDS.replayFinding, title: 'Replay', arguments: [spec.rank] };
      action.diagnostics = [diagnostic];
      action.isPreferred = true;
      actions.push(action);
    }
    if (spec.finding.worst) {
      const action = new vscode.CodeAction(
        `Minimize ${label(spec.finding)} seed ${spec.finding.worst.seed}`,
        vscode.CodeActionKind.QuickFix,
      );
      action.command = { command: COMMANDS.minimizeFinding, title: 'Minimize', arguments: [spec.rank] };
      action.diagnostics = [diagnostic];
      actions.push(action);
    }
  }
  return actions;
}
