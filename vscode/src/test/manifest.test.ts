// package.json against the code: the commands, settings, task type and problem matcher it
// contributes are the ones extension.ts uses, and the manifest is one VS Code 1.85 accepts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { DEFAULT_SETTINGS } from '../commands';
import {
  BOOLEAN_SETTINGS,
  COMMANDS,
  DIAGNOSTIC_SOURCE,
  PALETTE_COMMANDS,
  PROBLEM_MATCHER,
  SECTION,
  SETTINGS,
  TASK_TYPE,
  TEST_CONTROLLER,
} from '../ids';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const extensionSource = fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8');

describe('package.json', () => {
  it('names the extension, its engine and its entry point', () => {
    assert.equal(manifest.name, 'gpuemu');
    assert.equal(manifest.publisher, 'gpuemu');
    assert.equal(manifest.engines.vscode, '^1.85.0');
    assert.deepEqual(manifest.activationEvents, ['workspaceContains:**/gpuemu.toml']);
    assert.equal(manifest.main, './out/extension.js');
    assert.ok(fs.existsSync(path.join(ROOT, manifest.main)), 'tsc wrote out/extension.js');
  });

  it('types the API no newer than the engine it declares (vsce refuses otherwise)', () => {
    const types = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'node_modules', '@types', 'vscode', 'package.json'), 'utf8'),
    );
    const [major, minor] = types.version.split('.').map(Number);
    assert.ok(
      major === 1 && minor <= 85,
      `@types/vscode ${types.version} is newer than engines.vscode ^1.85.0`,
    );
  });

  it('contributes exactly the palette commands, in the gpuemu category', () => {
    const contributed = Object.fromEntries(
      manifest.contributes.commands.map((c: { command: string; title: string; category: string }) => {
        assert.equal(c.category, 'gpuemu', c.command);
        return [c.command, c.title];
      }),
    );
    assert.deepEqual(contributed, PALETTE_COMMANDS);
  });

  it('registers every command in extension.ts', () => {
    for (const key of Object.keys(COMMANDS)) {
      assert.ok(
        extensionSource.includes(`register(COMMANDS.${key},`),
        `extension.ts registers COMMANDS.${key}`,
      );
    }
  });

  it('contributes the settings with the defaults the code assumes', () => {
    const properties = manifest.contributes.configuration.properties;
    assert.deepEqual(
      Object.keys(properties).sort(),
      [...SETTINGS, ...Object.keys(BOOLEAN_SETTINGS)].map((s) => `${SECTION}.${s}`).sort(),
    );
    for (const [setting, value] of Object.entries(BOOLEAN_SETTINGS)) {
      assert.equal(properties[`${SECTION}.${setting}`].type, 'boolean');
      assert.equal(properties[`${SECTION}.${setting}`].default, value, setting);
      assert.ok(extensionSource.includes(`get<boolean>('${setting}', ${value})`), setting);
    }
    for (const setting of SETTINGS) {
      assert.equal(properties[`${SECTION}.${setting}`].type, 'string');
      assert.equal(properties[`${SECTION}.${setting}`].default, DEFAULT_SETTINGS[setting], setting);
      assert.ok(
        extensionSource.includes(`config.get<string>('${setting}', '${DEFAULT_SETTINGS[setting]}')`),
        setting,
      );
    }
  });

  it('defines the task type and the problem matcher the tasks use', () => {
    assert.deepEqual(
      manifest.contributes.taskDefinitions.map((t: { type: string }) => t.type),
      [TASK_TYPE],
    );
    assert.deepEqual(
      manifest.contributes.problemMatchers.map((m: { name: string }) => `$${m.name}`),
      [PROBLEM_MATCHER],
    );
    // A task's problem matcher and a diagnostic collection of the same owner share, and clear, each
    // other's markers (microsoft/vscode#251268): a reproduce task could wipe the result's problems.
    assert.notEqual(manifest.contributes.problemMatchers[0].owner, DIAGNOSTIC_SOURCE);
    assert.ok(extensionSource.includes('createDiagnosticCollection(DIAGNOSTIC_SOURCE)'));
  });

  it('creates the test controller with its id and a run and a fuzz profile', () => {
    const explorer = fs.readFileSync(path.join(ROOT, 'src', 'testExplorer.ts'), 'utf8');
    assert.ok(explorer.includes('vscode.tests.createTestController(TEST_CONTROLLER,'));
    assert.equal(TEST_CONTROLLER, 'gpuemu');
    assert.match(explorer, /profile\('Run \(gpuemu test[^']*'\, 'test', true\)/);
    assert.match(explorer, /profile\('Fuzz \(gpuemu fuzz[^']*'\, 'fuzz', false\)/);
  });

  it('has only build-time dependencies, so the packaged extension needs no node_modules', () => {
    assert.equal(manifest.dependencies, undefined);
    // @vscode/vsce builds the .vsix (`npm run package`, src/test/package.test.ts).
    assert.deepEqual(Object.keys(manifest.devDependencies).sort(), [
      '@types/node',
      '@types/vscode',
      '@vscode/vsce',
      'typescript',
    ]);
  });
});
