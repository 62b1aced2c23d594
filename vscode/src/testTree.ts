// The Test Explorer's model, free of the VS Code API: one item per op (a group per [[ops]] with
// implementations, one child per implementation), children per dtype; which gpuemu command lines
// run a selection of them; and the outcome of every item in a result.json.
import { Invocation, Project, invocation } from './commands';
import { ConfigOp } from './opsConfig';
import { Failure, OpResult, ResultDocument } from './result';

export interface TreeNode {
  id: string; // stable across reloads: "spec:softmax", "op:softmax/v1", "dtype:softmax/v1:float16"
  label: string;
  op?: string; // the result name run with --op (absent on a spec group)
  dtype?: string; // set on dtype children
  line?: number; // 0-based line in gpuemu.toml
  children: TreeNode[];
}

export type RunMode = 'test' | 'fuzz';

export const opId = (op: string) => `op:${op}`;
export const dtypeId = (op: string, dtype: string) => `dtype:${op}:${dtype}`;

const resultSpec = (r: OpResult) => (r as OpResult & { spec?: string }).spec;

// The items: the config's ops in file order, then ops that only the result knows (e.g. a config
// this reader could not follow), each with its dtypes from the config and the result.
export function buildTree(ops: ConfigOp[], result?: ResultDocument): TreeNode[] {
  const entries = ops.map((o) => ({ ...o, dtypes: [...o.dtypes] }));
  for (const r of result?.ops ?? []) {
    let entry = entries.find((e) => e.name === r.op);
    if (!entry) {
      const spec = resultSpec(r) ?? r.op;
      entry = {
        name: r.op,
        spec,
        ...(spec !== r.op ? { implementation: r.op.slice(spec.length + 1) } : {}),
        dtypes: [],
        kernelFiles: [],
        referenceFiles: [],
        line: 0,
      };
      entries.push(entry);
    }
    for (const d of r.dtypes) if (!entry.dtypes.includes(d.dtype)) entry.dtypes.push(d.dtype);
  }
  const opNode = (e: ConfigOp & { implementation?: string }): TreeNode => ({
    id: opId(e.name),
    label: e.implementation ?? e.name,
    op: e.name,
    line: e.line,
    children: e.dtypes.map((dtype) => ({
      id: dtypeId(e.name, dtype),
      label: dtype,
      op: e.name,
      dtype,
      line: e.line,
      children: [],
    })),
  });
  const roots: TreeNode[] = [];
  const groups = new Map<string, TreeNode>();
  for (const e of entries) {
    if (e.implementation === undefined) {
      roots.push(opNode(e));
      continue;
    }
    let group = groups.get(e.spec);
    if (!group) {
      group = { id: `spec:${e.spec}`, label: e.spec, line: e.line, children: [] };
      groups.set(e.spec, group);
      roots.push(group);
    }
    group.children.push(opNode(e));
  }
  return roots;
}

// The command lines that run `selected` (everything when empty): whole ops in one run, dtype items
// in one run per dtype. stdout of each is a result.json document (--format json).
export function runInvocations(project: Project, selected: TreeNode[], mode: RunMode): Invocation[] {
  const base = ['--format', 'json', mode];
  if (selected.length === 0) return [invocation(project, mode, base)];
  const whole: string[] = [];
  const byDtype = new Map<string, string[]>();
  const visit = (node: TreeNode) => {
    if (node.dtype !== undefined && node.op !== undefined) {
      const list = byDtype.get(node.dtype) ?? [];
      if (!list.includes(node.op)) list.push(node.op);
      byDtype.set(node.dtype, list);
    } else if (node.op !== undefined) {
      if (!whole.includes(node.op)) whole.push(node.op);
    } else node.children.forEach(visit);
  };
  selected.forEach(visit);
  const ops = (names: string[]) => names.flatMap((n) => ['--op', n]);
  const out: Invocation[] = [];
  if (whole.length > 0) out.push(invocation(project, `${mode} ${whole.join(' ')}`, [...base, ...ops(whole)]));
  for (const [dtype, names] of byDtype) {
    const rest = names.filter((n) => !whole.includes(n));
    if (rest.length > 0)
      out.push(
        invocation(project, `${mode} ${rest.join(' ')} [${dtype}]`, [
          ...base,
          ...ops(rest),
          '--dtype',
          dtype,
        ]),
      );
  }
  return out;
}

export interface Outcome {
  state: 'passed' | 'failed' | 'errored';
  message: string; // empty when passed
  cases: number;
}

function describe(failures: Failure[]): string {
  const shown = failures
    .slice(0, 5)
    .map((f) => `${f.kind} (${f.dtype}, seed ${f.seed}): ${f.message}\n  replay: ${f.replay}`);
  const more = failures.length > shown.length ? `\n... and ${failures.length - shown.length} more` : '';
  return shown.join('\n') + more;
}

function outcome(total: number, failed: number, errors: number, failures: Failure[]): Outcome {
  // A reference that cannot run says nothing about the kernel: that case errored, it did not fail.
  const kernelFailures = failures.filter((f) => f.kind !== 'reference_error');
  const state = kernelFailures.length > 0 || failed > 0 ? 'failed' : errors > 0 ? 'errored' : 'passed';
  return { state, message: state === 'passed' ? '' : describe(failures), cases: total };
}

// Every item the result has an outcome for, by item id (ops, their dtypes and spec groups).
export function outcomes(result: ResultDocument): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  const groups = new Map<string, Outcome[]>();
  for (const r of result.ops) {
    const o = outcome(r.total, r.failed, r.errors, r.failures);
    out.set(opId(r.op), o);
    for (const d of r.dtypes) {
      out.set(
        dtypeId(r.op, d.dtype),
        outcome(
          d.total,
          d.failed,
          d.errors,
          r.failures.filter((f) => f.dtype === d.dtype),
        ),
      );
    }
    const spec = resultSpec(r);
    if (spec !== undefined) groups.set(spec, [...(groups.get(spec) ?? []), o]);
  }
  for (const [spec, children] of groups) {
    const worst = children.find((c) => c.state === 'failed') ?? children.find((c) => c.state === 'errored');
    out.set(`spec:${spec}`, worst ?? { state: 'passed', message: '', cases: 0 });
  }
  return out;
}
