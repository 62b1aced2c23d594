// The Test Explorer's model: the items gpuemu.toml declares (examples/, implementations, extends),
// the command lines that run a selection, and the outcomes of result.json documents that the real
// binary wrote when it ran them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { DEFAULT_SETTINGS, Project, resolveProject } from '../commands';
import { configOps } from '../opsConfig';
import { parseResult } from '../result';
import { buildTree, dtypeId, opId, outcomes, runInvocations } from '../testTree';
import {
  REPO,
  gpuemuBinary,
  gpuemuEnv,
  opToml,
  projectToml,
  run,
  tempDir,
  writeProject,
} from '../testsupport/gpuemu';

describe('the ops of gpuemu.toml', () => {
  it('reads the 8 ops of examples/ with their dtypes, lines and kernel files', () => {
    const text = fs.readFileSync(path.join(REPO, 'examples', 'gpuemu.toml'), 'utf8');
    const ops = configOps(text);
    assert.deepEqual(
      ops.map((o) => o.name),
      [
        'softmax',
        'softmax_tail_bug',
        'matmul',
        'matmul_acc_bug',
        'attention',
        'attention_no_scale',
        'flash_attention',
        'flash_attention_no_rescale',
      ],
    );
    for (const op of ops) assert.deepEqual(op.dtypes, ['float32', 'float16', 'bfloat16']);
    assert.deepEqual(ops[1].kernelFiles, ['kernels/softmax_tail_bug.py']);
    assert.equal(text.split('\n')[ops[1].line], 'name = "softmax_tail_bug"');
  });

  it('names implementations OP/IMPL and follows extends', () => {
    const ops = configOps(`
[validation]
dtypes = ["float32", "float16"]   # default

[[ops]]
name = "softmax"
reference = "refs.softmax_ref:softmax_ref"
implementations = [
  "kernels.softmax:v1",                 # a callable: its function name
  'kernels/softmax_tail_bug.py',        # a script: its stem
  { name = "v3", op_script = "kernels.softmax3:softmax", source = "kernels/softmax3.py:40" },
]

[ops.schema]
dims = { M = [1, 40], N = [1, 300] }

[[ops]]
name = "softmax_wide"
extends = "softmax"
dtypes = ["float32"]

[[ops]]
name = "relu"
op_script = "relu.py"
dtypes = ["bfloat16"]
`);
    assert.deepEqual(
      ops.map((o) => [o.name, o.spec, o.implementation, o.dtypes.join(','), o.kernelFiles.join(',')]),
      [
        ['softmax/v1', 'softmax', 'v1', 'float32,float16', ''],
        [
          'softmax/softmax_tail_bug',
          'softmax',
          'softmax_tail_bug',
          'float32,float16',
          'kernels/softmax_tail_bug.py',
        ],
        ['softmax/v3', 'softmax', 'v3', 'float32,float16', ''],
        ['softmax_wide/v1', 'softmax_wide', 'v1', 'float32', ''],
        [
          'softmax_wide/softmax_tail_bug',
          'softmax_wide',
          'softmax_tail_bug',
          'float32',
          'kernels/softmax_tail_bug.py',
        ],
        ['softmax_wide/v3', 'softmax_wide', 'v3', 'float32', ''],
        ['relu', 'relu', undefined, 'bfloat16', 'relu.py'],
      ],
    );
    const tree = buildTree(ops);
    assert.deepEqual(
      tree.map((n) => n.id),
      ['spec:softmax', 'spec:softmax_wide', 'op:relu'],
    );
    assert.deepEqual(
      tree[0].children.map((n) => n.label),
      ['v1', 'softmax_tail_bug', 'v3'],
    );
    assert.deepEqual(
      tree[0].children[0].children.map((n) => n.id),
      [dtypeId('softmax/v1', 'float32'), dtypeId('softmax/v1', 'float16')],
    );
  });
});

describe('running items with the real binary', () => {
  let root = '';
  let project: Project;
  let env: NodeJS.ProcessEnv;

  before(() => {
    root = tempDir('explorer');
    const ops =
      opToml('tail', 'op_off_by_tail.py', 'op_off_by_tail.py:7') + opToml('identity', 'op_identity.py');
    // A generous case timeout: cold Python scripts on a loaded machine take seconds to start.
    const toml = projectToml(ops)
      .replace('dtypes = ["float32"]', 'dtypes = ["float32", "float16"]')
      .replace('timeout = 5', 'timeout = 120\nfuzz_iterations = 4');
    const config = writeProject(root, toml, ['op_off_by_tail.py', 'op_identity.py', 'ref_identity.py']);
    project = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() }, root, config);
    env = gpuemuEnv(root);
  });

  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it('runs the whole tree in one gpuemu test and marks the buggy op and its dtypes failed', () => {
    const tree = buildTree(configOps(fs.readFileSync(project.config!, 'utf8')));
    const [inv] = runInvocations(project, [], 'test');
    assert.deepEqual(inv.args.slice(2), ['--format', 'json', 'test']);
    const ran = run(inv, env);
    assert.equal(ran.code, 1, ran.stderr);
    const found = outcomes(parseResult(ran.stdout, 'stdout'));
    assert.equal(found.get(opId('identity'))?.state, 'passed');
    assert.equal(found.get(opId('tail'))?.state, 'failed');
    assert.match(
      found.get(opId('tail'))!.message,
      /mismatch \(float(32|16), seed \d+\): .*\n {2}replay: gpuemu reproduce \d+ --op tail/,
    );
    for (const node of tree) {
      for (const child of node.children) assert.ok(found.has(child.id), `an outcome for ${child.id}`);
    }
  });

  it('runs a dtype item as --op OP --dtype D, and a fuzz profile as gpuemu fuzz', () => {
    const tree = buildTree(configOps(fs.readFileSync(project.config!, 'utf8')));
    const identity = tree.find((n) => n.id === opId('identity'))!;
    const tailF16 = tree.find((n) => n.id === opId('tail'))!.children.find((c) => c.dtype === 'float16')!;
    const invocations = runInvocations(project, [identity, tailF16], 'fuzz');
    assert.deepEqual(
      invocations.map((i) => i.args.slice(2)),
      [
        ['--format', 'json', 'fuzz', '--op', 'identity'],
        ['--format', 'json', 'fuzz', '--op', 'tail', '--dtype', 'float16'],
      ],
    );
    const result = parseResult(run(invocations[1], env).stdout, 'stdout');
    assert.equal(result.command, 'fuzz');
    assert.deepEqual(
      result.ops.map((o) => [o.op, o.dtypes.filter((d) => d.total > 0).map((d) => d.dtype)]),
      [['tail', ['float16']]],
    );
    const found = outcomes(result);
    assert.equal(found.get(dtypeId('tail', 'float16'))?.state, 'failed');
    assert.notEqual(found.get(dtypeId('tail', 'float32'))?.state, 'failed'); // listed, no case ran
  });

  it('reports a configuration error as exit 2, which the explorer shows as errored', () => {
    fs.writeFileSync(path.join(root, 'broken.toml'), '[[ops]]\nname = 3\n');
    const broken = resolveProject(
      { ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() },
      root,
      path.join(root, 'broken.toml'),
    );
    const ran = run(runInvocations(broken, [], 'test')[0], env);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /broken\.toml.*error/);
  });
});
