// The Test Explorer: a TestController whose items come from gpuemu.toml (testTree.ts), run from the
// explorer with `gpuemu test` or `gpuemu fuzz` (result.json on stdout), and that also shows the
// outcomes of every result.json the extension reads (a CI run, a validate-on-save run).
import * as fs from 'node:fs';
import * as vscode from 'vscode';

import { Project, formatCommandLine } from './commands';
import { TEST_CONTROLLER } from './ids';
import { ConfigOp, configOps } from './opsConfig';
import { ResultDocument, parseResult } from './result';
import { exitMeaning, runCaptured } from './run';
import { Outcome, RunMode, TreeNode, buildTree, outcomes, runInvocations } from './testTree';

export class TestExplorer implements vscode.Disposable {
  readonly controller = vscode.tests.createTestController(TEST_CONTROLLER, 'gpuemu');
  private nodes = new Map<string, TreeNode>();
  ops: ConfigOp[] = [];

  constructor(
    private readonly project: () => Project | undefined,
    private readonly output: vscode.OutputChannel,
  ) {
    const profile = (label: string, mode: RunMode, isDefault: boolean) =>
      this.controller.createRunProfile(
        label,
        vscode.TestRunProfileKind.Run,
        (request, token) => this.run(mode, request, token),
        isDefault,
      );
    profile('Run (gpuemu test: the fixed cases)', 'test', true);
    profile('Fuzz (gpuemu fuzz: seeded random cases)', 'fuzz', false);
    this.controller.refreshHandler = () => this.refresh();
  }

  dispose(): void {
    this.controller.dispose();
  }

  // Re-reads gpuemu.toml and rebuilds the items; `result` adds ops only a result knows.
  refresh(result?: ResultDocument): void {
    const project = this.project();
    this.ops = [];
    if (project?.config) {
      try {
        this.ops = configOps(fs.readFileSync(project.config, 'utf8'));
      } catch (e) {
        this.output.appendLine(
          `gpuemu Test Explorer: cannot read the ops of ${project.config}: ${String(e)}`,
        );
      }
    }
    const roots = buildTree(this.ops, result);
    this.nodes.clear();
    const uri = project?.config ? vscode.Uri.file(project.config) : undefined;
    const make = (node: TreeNode): vscode.TestItem => {
      this.nodes.set(node.id, node);
      const item = this.controller.createTestItem(node.id, node.label, uri);
      if (node.line !== undefined) item.range = new vscode.Range(node.line, 0, node.line, 0);
      item.children.replace(node.children.map(make));
      return item;
    };
    this.controller.items.replace(roots.map(make));
  }

  private item(id: string): vscode.TestItem | undefined {
    let found: vscode.TestItem | undefined;
    const visit = (items: vscode.TestItemCollection) =>
      items.forEach((item) => {
        if (item.id === id) found = item;
        else if (!found) visit(item.children);
      });
    visit(this.controller.items);
    return found;
  }

  // Shows a result's outcomes as a finished test run (what a CI run or a save validation found).
  publish(result: ResultDocument, name: string): void {
    const known = new Set(this.nodes.keys());
    if (result.ops.some((r) => !known.has(`op:${r.op}`))) this.refresh(result);
    const run = this.controller.createTestRun(new vscode.TestRunRequest(), name, false);
    this.apply(run, outcomes(result));
    run.end();
  }

  private apply(run: vscode.TestRun, found: Map<string, Outcome>): void {
    for (const [id, outcome] of found) {
      const item = this.item(id);
      if (!item) continue;
      if (outcome.state === 'passed') run.passed(item);
      else if (outcome.state === 'errored') run.errored(item, new vscode.TestMessage(outcome.message));
      else run.failed(item, new vscode.TestMessage(outcome.message));
    }
  }

  private async run(
    mode: RunMode,
    request: vscode.TestRunRequest,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const project = this.project();
    const run = this.controller.createTestRun(request, `gpuemu ${mode}`, false);
    if (!project) {
      run.appendOutput('gpuemu: open a folder with a gpuemu.toml first.\r\n');
      run.end();
      return;
    }
    const selected = (request.include ?? [])
      .map((i) => this.nodes.get(i.id))
      .filter((n): n is TreeNode => !!n);
    const started = request.include ?? [];
    const all: vscode.TestItem[] = [];
    const collect = (item: vscode.TestItem) => {
      all.push(item);
      item.children.forEach(collect);
    };
    (started.length > 0 ? started : [...iterate(this.controller.items)]).forEach(collect);
    all.forEach((item) => run.started(item));
    const abort = new AbortController();
    token.onCancellationRequested(() => abort.abort());
    for (const inv of runInvocations(project, selected, mode)) {
      run.appendOutput(`$ ${formatCommandLine(inv.command, inv.args)}\r\n`);
      try {
        const captured = await runCaptured(inv, undefined, abort.signal);
        if (captured.code !== 0 && captured.code !== 1) {
          const why = `gpuemu ${inv.title}: ${exitMeaning(captured.code)}\n${captured.stderr.trim().split('\n').slice(-10).join('\n')}`;
          all.forEach((item) => run.errored(item, new vscode.TestMessage(why)));
          continue;
        }
        this.apply(run, outcomes(parseResult(captured.stdout, `stdout of ${inv.title}`)));
      } catch (e) {
        if (abort.signal.aborted) break;
        all.forEach((item) => run.errored(item, new vscode.TestMessage(String(e))));
      }
    }
    run.end();
  }
}

function* iterate(items: vscode.TestItemCollection): Generator<vscode.TestItem> {
  const list: vscode.TestItem[] = [];
  items.forEach((i) => list.push(i));
  yield* list;
}
