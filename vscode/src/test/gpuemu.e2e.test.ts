// End to end with the real gpuemu binary ($GPUEMU_BIN, else build/gpuemu): the command lines the
// extension builds run a real project, and the result.json they write is read, ordered and placed
// as the Problems panel shows it, in the same order as the SARIF gpuemu itself renders.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  DEFAULT_SETTINGS,
  Project,
  ciRunCommand,
  displayCommandLine,
  lintCommand,
  minimizeCommand,
  replayCommand,
  reproduceCommand,
  resolveProject,
} from '../commands';
import { diagnosticsFor } from '../diagnostics';
import { Finding, casePicks, collectFindings, label } from '../findings';
import { ResultDocument, parseResult } from '../result';
import { lintOutcome, runCaptured } from '../run';
import { resultStatus } from '../status';
import {
  gpuemuBinary,
  gpuemuEnv,
  opToml,
  projectToml,
  run,
  tempDir,
  writeProject,
} from '../testsupport/gpuemu';

const KERNELS = `
[[kernels]]
name = "saxpy"
source = "kernels/saxpy.ptx"

[[kernels]]
name = "saxpy_local"
source = "kernels/saxpy_local.ptx"

[kernels.artifact_checks]
forbidden_instructions = ["ld.local"]
`;

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8'));

// A project with two buggy ops (one naming its source, one not), a correct op and two kernels, one
// of which breaks the lint checks; `ci run` as the "Run CI gate" command starts it.
describe('a failing project, end to end', () => {
  let root = '';
  let project: Project;
  let env: NodeJS.ProcessEnv;
  let exitCode: number | null = null;
  let result: ResultDocument;
  let findings: Finding[];

  before(() => {
    const binary = gpuemuBinary();
    root = tempDir('failing');
    const ops =
      opToml('tail', 'op_off_by_tail.py', 'op_off_by_tail.py:7') +
      opToml('tail_nosource', 'op_off_by_tail.py') +
      opToml('identity', 'op_identity.py', 'op_identity.py');
    const config = writeProject(
      root,
      projectToml(ops, KERNELS),
      ['op_off_by_tail.py', 'op_identity.py', 'ref_identity.py'],
      ['saxpy.ptx', 'saxpy_local.ptx'],
    );
    project = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: binary }, root, config);
    env = gpuemuEnv(root);
    const ran = run(ciRunCommand(project), env);
    exitCode = ran.code;
    assert.ok(fs.existsSync(project.resultFile), `ci run wrote no ${project.resultFile}: ${ran.stderr}`);
    result = parseResult(fs.readFileSync(project.resultFile, 'utf8'), project.resultFile);
    findings = collectFindings(result);
  });

  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it('ci run exits 1 and writes the result into gpuemu-out/', () => {
    assert.equal(exitCode, 1);
    assert.equal(project.resultFile, path.join(root, 'gpuemu-out', 'result.json'));
    assert.equal(result.command, 'ci');
    assert.equal(result.passed, false);
    assert.deepEqual(
      result.ops.map((o) => [o.op, o.failed > 0]),
      [
        ['identity', false],
        ['tail', true],
        ['tail_nosource', true],
      ],
    );
  });

  it('orders the findings as the SARIF gpuemu rendered from the same result', () => {
    const sarif = JSON.parse(fs.readFileSync(path.join(project.outDir, 'gpuemu.sarif'), 'utf8'));
    const sarifResults = sarif.runs[0].results as { ruleId: string; message: { text: string } }[];
    assert.equal(findings.length, sarifResults.length);
    assert.ok(findings.length >= 3);
    findings.forEach((f, i) => {
      assert.equal(f.kind.ruleId, sarifResults[i].ruleId, `finding ${i}`);
      assert.ok(
        sarifResults[i].message.text.includes(label(f)),
        `${label(f)} in SARIF result ${i}: ${sarifResults[i].message.text}`,
      );
    });
    assert.deepEqual(
      findings.map((f) => f.kind.name),
      ['mismatch', 'mismatch', ...findings.slice(2).map(() => 'lint_violation')],
    );
  });

  it('places the findings at the written or inferred op source and the lint violations', () => {
    const configText = fs.readFileSync(project.config!, 'utf8');
    const specs = diagnosticsFor(findings, { root: project.root, config: project.config, configText });
    const where = specs.map((s) => `${label(s.finding)} ${s.file}:${s.line + 1}`);
    assert.equal(where[0], `tail[float32] ${path.join(root, 'op_off_by_tail.py')}:7`);
    // An op without `source` gets one inferred from its op script (the script's path, line 1).
    assert.equal(where[1], `tail_nosource[float32] ${path.join(root, 'op_off_by_tail.py')}:1`);
    const lint = result.ci?.lint;
    assert.ok(lint && !lint.passed);
    const violations = lint.kernels.flatMap((k) => k.violations.map((v) => ({ k, v })));
    assert.equal(specs.length, 2 + violations.length);
    // The forbidden ld.local is reported at the CUDA line the PTX's .loc names; the others at the kernel.
    const forbidden = specs.find((s) => s.finding.dtype === 'forbidden_instructions');
    assert.ok(forbidden, where.join('\n'));
    assert.match(forbidden.file, /saxpy_local\.cu$/);
    assert.ok(
      forbidden.line + 1 > 0 && forbidden.message.endsWith('Replay: gpuemu lint --kernel saxpy_local'),
    );
    for (const s of specs.filter(
      (spec) => spec.finding.violation && spec.finding.violation.file === 'kernels/saxpy_local.ptx',
    )) {
      assert.equal(s.file, path.join(root, 'kernels', 'saxpy_local.ptx'));
    }
    assert.ok(specs[0].message.endsWith(`Replay: ${findings[0].worst?.replay}`));
  });

  it('builds the replay commands the document prints, seeds as exact strings', () => {
    for (const f of findings.filter((x) => x.worst)) {
      assert.equal(displayCommandLine(replayCommand(project, f)!), f.worst!.replay);
    }
    // Seeds are u64: with this master seed some exceed 2^63 and would lose digits as numbers.
    const seeds = result.ops.flatMap((o) => o.failures.map((c) => c.seed));
    assert.ok(
      seeds.some((s) => BigInt(s) >= 2n ** 63n),
      `a seed above 2^63 among ${seeds.join(' ')}`,
    );
    for (const s of seeds) assert.equal(BigInt(s).toString(), s);
  });

  it('reproduce, as the quick pick runs it, replays a failing case that still fails', () => {
    const [pick] = casePicks(findings);
    const ran = run(reproduceCommand(project, pick.seed, pick.op), env);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(ran.stdout, /mismatch/);
  });

  it('minimize shrinks the picked case', () => {
    const pick = casePicks(findings).find((p) => p.op === 'tail')!;
    const ran = run(minimizeCommand(project, pick.seed, pick.op), env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, new RegExp(`minimized tail seed ${pick.seed} \\(mismatch\\)`));
  });

  it('lint --format json gives the violations ci run found', async () => {
    const report = lintOutcome(
      await runCaptured(lintCommand(project, { json: true }), env),
      'gpuemu lint --format json',
    );
    assert.equal(report.passed, false);
    const fromLint = collectFindings(undefined, report).map(
      (f) => `${label(f)} ${f.location.path}:${f.location.line}`,
    );
    const fromCi = findings
      .filter((f) => f.violation)
      .map((f) => `${label(f)} ${f.location.path}:${f.location.line}`);
    assert.deepEqual(fromLint, fromCi);
  });

  it('the status bar counts the failing and passing cases', () => {
    const passed = result.ops.reduce((n, o) => n + o.passed, 0);
    const failed = result.ops.reduce((n, o) => n + o.failed + o.errors, 0);
    const violations = findings.filter((f) => f.violation).length;
    assert.equal(
      resultStatus(result, findings, project.resultFile).text,
      `$(error) gpuemu ${failed} failed, ${passed} passed, ${violations} lint violation${violations === 1 ? '' : 's'}`,
    );
  });
});

describe('a passing project, end to end', () => {
  it('ci run exits 0 and shows no problem', () => {
    const root = tempDir('passing');
    try {
      const config = writeProject(
        root,
        projectToml(opToml('identity', 'op_identity.py', 'op_identity.py:1')),
        ['op_identity.py', 'ref_identity.py'],
      );
      const project = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() }, root, config);
      const ran = run(ciRunCommand(project), gpuemuEnv(root));
      assert.equal(ran.code, 0, ran.stderr);
      const result = parseResult(fs.readFileSync(project.resultFile, 'utf8'), project.resultFile);
      assert.deepEqual(collectFindings(result), []);
      const total = result.ops[0].total;
      assert.ok(total > 0);
      assert.equal(resultStatus(result, [], project.resultFile).text, `$(pass) gpuemu ${total} passed`);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a configuration error, end to end', () => {
  it('exits 2 with a diagnostic the contributed problem matcher reads', async () => {
    const root = tempDir('config');
    try {
      const toml = projectToml(opToml('identity', 'op_identity.py')).replace(
        'dtypes = ["float32"]',
        'dtypes = ["flaot32"]',
      );
      const config = writeProject(root, toml, ['op_identity.py', 'ref_identity.py']);
      const project = resolveProject({ ...DEFAULT_SETTINGS, binaryPath: gpuemuBinary() }, root, config);
      const ran = await runCaptured(ciRunCommand(project), gpuemuEnv(root));
      assert.equal(ran.code, 2, ran.stderr);
      const [matcher] = manifest.contributes.problemMatchers;
      const pattern = new RegExp(matcher.pattern.regexp);
      const matched = ran.stderr
        .split('\n')
        .map((line) => pattern.exec(line))
        .filter((m) => m !== null);
      assert.equal(matched.length, 1, ran.stderr);
      const m = matched[0]!;
      const line = toml.split('\n').findIndex((l) => l.includes('flaot32')) + 1;
      assert.deepEqual(
        [m[matcher.pattern.file], m[matcher.pattern.line], m[matcher.pattern.severity]],
        [config, String(line), 'error'],
      );
      assert.match(m[matcher.pattern.message], /unknown dtype 'flaot32'/);
      assert.ok(Number(m[matcher.pattern.column]) > 1);
      assert.equal(fs.existsSync(project.resultFile), false);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
