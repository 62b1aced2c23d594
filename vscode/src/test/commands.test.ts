// commands.ts: the project the settings name and the argument arrays the extension runs.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
  DEFAULT_SETTINGS,
  ciRunCommand,
  displayCommandLine,
  formatCommandLine,
  lintCommand,
  minimizeCommand,
  replayCommand,
  reproduceCommand,
  resolveBinary,
  resolveProject,
} from '../commands';
import { collectFindings } from '../findings';
import { locateBinary } from '../run';
import { document, failure, kernel, op } from '../testsupport/documents';
import { tempDir } from '../testsupport/gpuemu';

const WS = path.resolve('/ws/repo');

describe('resolveProject', () => {
  it('defaults: gpuemu on PATH, the discovered gpuemu.toml, gpuemu-out/result.json', () => {
    const project = resolveProject(DEFAULT_SETTINGS, WS, path.join(WS, 'kernels', 'gpuemu.toml'));
    assert.deepEqual(project, {
      workspaceFolder: WS,
      binary: 'gpuemu',
      config: path.join(WS, 'kernels', 'gpuemu.toml'),
      root: path.join(WS, 'kernels'),
      resultFile: path.join(WS, 'gpuemu-out', 'result.json'),
      outDir: path.join(WS, 'gpuemu-out'),
    });
  });

  it('without a config gpuemu finds one from the workspace folder', () => {
    const project = resolveProject(DEFAULT_SETTINGS, WS);
    assert.equal(project.config, undefined);
    assert.equal(project.root, WS);
    assert.deepEqual(ciRunCommand(project).args, ['ci', 'run', '--out', path.join(WS, 'gpuemu-out')]);
  });

  it('takes the settings relative to the workspace folder, with ${workspaceFolder}', () => {
    const project = resolveProject(
      {
        binaryPath: 'build/gpuemu',
        configPath: 'examples/gpuemu.toml',
        resultPath: '${workspaceFolder}/ci/r.json',
      },
      WS,
      '/ignored/gpuemu.toml',
    );
    assert.equal(project.binary, path.join(WS, 'build', 'gpuemu'));
    assert.equal(project.config, path.join(WS, 'examples', 'gpuemu.toml'));
    assert.equal(project.root, path.join(WS, 'examples'));
    assert.equal(project.resultFile, path.join(WS, 'ci', 'r.json'));
    assert.equal(project.outDir, path.join(WS, 'ci'));
  });

  it('an empty setting means the default', () => {
    const project = resolveProject({ binaryPath: ' ', configPath: '', resultPath: '' }, WS);
    assert.equal(project.binary, 'gpuemu');
    assert.equal(project.resultFile, path.join(WS, 'gpuemu-out', 'result.json'));
  });

  it('resolveBinary keeps bare names for the PATH lookup', () => {
    assert.equal(resolveBinary('gpuemu-dev', WS), 'gpuemu-dev');
    assert.equal(resolveBinary('/opt/gpuemu/bin/gpuemu', WS), '/opt/gpuemu/bin/gpuemu');
    assert.equal(resolveBinary('./gpuemu', WS), path.join(WS, 'gpuemu'));
    assert.equal(resolveBinary('${userHome}/bin/gpuemu', WS), path.join(os.homedir(), 'bin', 'gpuemu'));
  });
});

describe('command lines', () => {
  const project = resolveProject(
    { ...DEFAULT_SETTINGS, binaryPath: '/opt/gpuemu' },
    WS,
    path.join(WS, 'my project', 'gpuemu.toml'),
  );
  const config = ['--config', path.join(WS, 'my project', 'gpuemu.toml')];

  it('ci run writes into the result file directory, in the project root', () => {
    assert.deepEqual(ciRunCommand(project), {
      command: '/opt/gpuemu',
      args: [...config, 'ci', 'run', '--out', path.join(WS, 'gpuemu-out')],
      cwd: path.join(WS, 'my project'),
      title: 'ci run',
    });
  });

  it('a seed above 2^63 (and 2^53) stays the exact decimal string', () => {
    const seed = '18446744073709551615';
    assert.ok(BigInt(seed) > 2n ** 63n && Number(seed).toString() !== seed);
    assert.deepEqual(reproduceCommand(project, seed, 'softmax').args, [
      ...config,
      'reproduce',
      seed,
      '--op',
      'softmax',
    ]);
    assert.deepEqual(minimizeCommand(project, '9223372036854775809', 'softmax').args, [
      ...config,
      'minimize',
      '9223372036854775809',
      '--op',
      'softmax',
    ]);
  });

  it('refuses what is not a seed instead of passing it on', () => {
    for (const bad of ['18446744073709551616', '1e3', '--help', '', '12; rm -rf /']) {
      assert.throws(() => reproduceCommand(project, bad, 'op'), /is not a gpuemu seed/);
    }
  });

  it('an op name is one argument whatever it holds', () => {
    const args = reproduceCommand(project, '5', 'my op; $(echo x)').args;
    assert.deepEqual(args.slice(-2), ['--op', 'my op; $(echo x)']);
  });

  it('lint, of every kernel or one, as text or JSON', () => {
    assert.deepEqual(lintCommand(project).args, [...config, 'lint']);
    assert.deepEqual(lintCommand(project, { json: true }).args, [...config, '--format', 'json', 'lint']);
    assert.deepEqual(lintCommand(project, { kernel: 'saxpy' }).args, [
      ...config,
      'lint',
      '--kernel',
      'saxpy',
    ]);
  });

  it('replay: the worst case of a failing (op, dtype), the kernel of a lint violation, nothing for a regression', () => {
    const doc = document(
      [
        op('softmax', [
          failure('softmax', 'float16', 'mismatch', 2, '17'),
          failure('softmax', 'float16', 'mismatch', 9, '18'),
        ]),
      ],
      {
        quick: false,
        shard: null,
        baseline: { regressions: [{ op: 'softmax', dtype: 'float32', reason: 'worse' }] },
        lint: {
          passed: false,
          kernels: [kernel('saxpy', 'k.ptx', 1, [{ check: 'max_spills', message: 'm', file: '', line: 0 }])],
        },
      },
    );
    const [worst, regression, lint] = collectFindings(doc);
    assert.deepEqual(replayCommand(project, worst)?.args, [...config, 'reproduce', '18', '--op', 'softmax']);
    assert.equal(displayCommandLine(replayCommand(project, worst)!), worst.worst?.replay);
    assert.equal(replayCommand(project, regression), undefined);
    assert.equal(displayCommandLine(replayCommand(project, lint)!), 'gpuemu lint --kernel saxpy');
  });

  it('formats a command line for a person, quoted for a POSIX shell', () => {
    assert.equal(
      formatCommandLine('/opt/gpuemu', ['--config', '/a b/gpuemu.toml', 'reproduce', '5', '--op', "it's"]),
      "/opt/gpuemu --config '/a b/gpuemu.toml' reproduce 5 --op 'it'\\''s'",
    );
    assert.equal(
      displayCommandLine(ciRunCommand(project)),
      `gpuemu ci run --out ${path.join(WS, 'gpuemu-out')}`,
    );
  });
});

describe('locateBinary', () => {
  it('finds a bare name on PATH and an absolute path, executable files only', () => {
    const dir = tempDir('path');
    const exe = path.join(dir, 'gpuemu-test-bin');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'not-executable'), '', { mode: 0o644 });
    fs.mkdirSync(path.join(dir, 'a-directory'));
    const envPath = ['/nonexistent', dir].join(path.delimiter);
    assert.equal(locateBinary('gpuemu-test-bin', envPath), exe);
    assert.equal(locateBinary(exe, ''), exe);
    assert.equal(locateBinary('not-executable', envPath), undefined);
    assert.equal(locateBinary('a-directory', envPath), undefined);
    assert.equal(locateBinary('gpuemu-test-bin', '/nonexistent'), undefined);
    assert.equal(locateBinary(path.join(dir, 'missing'), envPath), undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
