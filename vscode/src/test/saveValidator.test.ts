// gpuemu.validateOnSave: which ops a saved file belongs to, and the debounce and cancellation of
// the runs, with the real binary (a hanging op shows that a newer save really stops the old run).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { DEFAULT_SETTINGS, Invocation, Project, resolveProject } from '../commands';
import { configOps } from '../opsConfig';
import { parseResult } from '../result';
import { Captured, runCaptured } from '../run';
import { SaveValidator, Validation, opsForFile, validateCommand } from '../saveValidator';
import { gpuemuBinary, gpuemuEnv, opToml, projectToml, tempDir, writeProject } from '../testsupport/gpuemu';

const until = async (check: () => boolean, ms = 180_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${String(check)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('validate on save', () => {
  let root = '';
  let project: Project;
  let env: NodeJS.ProcessEnv;

  before(() => {
    root = tempDir('save');
    const ops =
      opToml('tail', 'op_off_by_tail.py', 'op_off_by_tail.py:7') +
      opToml('identity', 'op_identity.py') +
      opToml('hang', 'op_hang.py');
    const config = writeProject(root, projectToml(ops, '').replace('timeout = 5', 'timeout = 60'), [
      'op_off_by_tail.py',
      'op_identity.py',
      'op_hang.py',
      'ref_identity.py',
    ]);
    project = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() }, root, config);
    env = { ...gpuemuEnv(root), HANG_PID_FILE: path.join(root, 'hang.pids') };
  });

  after(() => {
    // Only when a test failed: a hanging script that outlived gpuemu.
    const pidFile = path.join(root, 'hang.pids');
    const left = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').split(/\s+/).filter(Boolean) : [];
    for (const pid of left.map(Number)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('maps a saved kernel file to its ops', () => {
    const ops = configOps(fs.readFileSync(project.config!, 'utf8'));
    assert.deepEqual(opsForFile(path.join(root, 'op_off_by_tail.py'), project, ops), ['tail']);
    // The reference script all three share: saving it validates every op that uses it.
    const shared = opsForFile(path.join(root, 'ref_identity.py'), project, ops);
    assert.deepEqual(shared, ['tail', 'identity', 'hang']);
    assert.deepEqual(opsForFile(path.join(root, 'ref_other.py'), project, ops), []);
    // A callable's file is known from the last result's source.
    const result = { ops: [{ op: 'fancy', source: 'kernels/fancy.py:12' }] } as unknown as Parameters<
      typeof opsForFile
    >[3];
    assert.deepEqual(opsForFile(path.join(root, 'kernels', 'fancy.py'), project, [], result), ['fancy']);
  });

  it("saving a reference script validates the ops that use it (readme.txt's on-save promise)", async () => {
    const refRoot = tempDir('save-ref');
    try {
      const shared = opToml('tail', 'op_off_by_tail.py') + opToml('identity', 'op_identity.py');
      const callable =
        '\n[[ops]]\nname = "by_module"\nop_script = "op_identity.py"\nreference = "refs.identity:run"\n';
      const config = writeProject(refRoot, projectToml(shared + callable, ''), [
        'op_off_by_tail.py',
        'op_identity.py',
        'ref_identity.py',
      ]);
      const refProject = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() }, refRoot, config);
      const ops = configOps(fs.readFileSync(config, 'utf8'));
      const saved = opsForFile(path.join(refRoot, 'ref_identity.py'), refProject, ops);
      assert.deepEqual(saved, ['tail', 'identity']); // a module:function reference is no file of its own
      const reports: Validation[] = [];
      const validator = new SaveValidator(
        (inv, signal) => runCaptured(inv, gpuemuEnv(refRoot), signal),
        (v) => reports.push(v),
        (names) => validateCommand(refProject, names),
        10,
      );
      validator.saved(saved);
      await until(() => reports.length === 1);
      const outcome = reports[0].outcome as { captured: Captured };
      // The buggy kernel fails, its twin passes.
      assert.equal(outcome.captured.code, 1, outcome.captured.stderr);
      assert.deepEqual(
        parseResult(outcome.captured.stdout, 'stdout').ops.map((o) => [o.op, o.failed > 0]),
        [
          ['identity', false],
          ['tail', true],
        ],
      );
      validator.dispose();
    } finally {
      fs.rmSync(refRoot, { recursive: true, force: true });
    }
  });

  it('debounces a burst of saves into one run of their ops', async () => {
    const runs: Invocation[] = [];
    const reports: Validation[] = [];
    const validator = new SaveValidator(
      (inv, signal) => {
        runs.push(inv);
        return runCaptured(inv, env, signal);
      },
      (v) => reports.push(v),
      (ops) => validateCommand(project, ops),
      100,
    );
    validator.saved(['tail']);
    validator.saved(['tail']);
    validator.saved(['identity']);
    await until(() => reports.length === 1);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0].args.slice(2), ['--format', 'json', 'test', '--op', 'tail', '--op', 'identity']);
    const outcome = reports[0].outcome as { captured: Captured };
    assert.equal(outcome.captured.code, 1);
    const result = parseResult(outcome.captured.stdout, 'stdout');
    assert.deepEqual(
      result.ops.map((o) => [o.op, o.failed > 0]),
      [
        ['identity', false],
        ['tail', true],
      ],
    );
    validator.dispose();
  });

  it('a newer save cancels the run in progress: gpuemu is stopped, the newer run reports', async () => {
    const reports: Validation[] = [];
    const validator = new SaveValidator(
      (inv, signal) => runCaptured(inv, env, signal),
      (v) => reports.push(v),
      (ops) => validateCommand(project, ops),
      50,
    );
    validator.saved(['hang']);
    const pidFile = path.join(root, 'hang.pids');
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '');
    const script = Number(fs.readFileSync(pidFile, 'utf8').split(/\s+/)[0]);
    const gpuemu = parentOf(script); // the hanging op script is gpuemu's child
    assert.ok(gpuemu > 1 && alive(gpuemu));
    validator.saved(['identity']);
    await until(() => reports.length === 2);
    assert.ok('cancelled' in reports[0].outcome, JSON.stringify(reports[0]));
    assert.deepEqual(reports[0].ops, ['hang']);
    const second = reports[1].outcome as { captured: Captured };
    assert.equal(second.captured.code, 0, second.captured.stderr);
    assert.deepEqual(reports[1].ops, ['identity']);
    await until(() => !alive(gpuemu), 30_000);
    // gpuemu has no SIGTERM handler yet, so the op script it was running outlives it (reported; the
    // after() hook kills it).
    validator.dispose();
  });
});

function parentOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

// True while `pid` runs; a zombie waiting for a parent that does not reap (no init here) is gone.
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}
