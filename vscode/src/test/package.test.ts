// The .vsix: `npm run package` (the real vsce, installed by npm ci) on a fresh copy of the extension
// folder builds a clean package, which holds exactly the code that runs and a publishable manifest.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { REPO, tempDir } from '../testsupport/gpuemu';
import { readZip, ZipEntry } from '../testsupport/zip';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

// What a checkout holds: not this build's out/ or a .vsix built earlier, so the package's prepublish
// step must compile by itself. node_modules is linked rather than copied (npm ci made it).
function freshCheckout(into: string): void {
  fs.cpSync(ROOT, into, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(ROOT, source);
      return !['node_modules', 'out'].includes(relative) && !relative.endsWith('.vsix');
    },
  });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(into, 'node_modules'), 'dir');
}

describe('npm run package', () => {
  let root = '';
  let ran: { code: number | null; output: string };
  let entries: Map<string, Buffer>;

  before(() => {
    root = tempDir('vsix');
    const folder = path.join(root, 'vscode');
    freshCheckout(folder);
    // stdin is closed: a warning that asks "Do you want to continue? [y/N]" reads no answer and
    // aborts, so a missing repository or licence fails here instead of waiting for a key.
    const proc = spawnSync('npm', ['run', 'package'], {
      cwd: folder,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (proc.error) throw proc.error;
    ran = { code: proc.status, output: proc.stdout + proc.stderr };
    const vsix = path.join(folder, 'gpuemu.vsix');
    entries = new Map(
      fs.existsSync(vsix) ? readZip(fs.readFileSync(vsix)).map((e: ZipEntry) => [e.name, e.data]) : [],
    );
  });
  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it('builds gpuemu.vsix from a checkout, compiling first, without a warning or a question', () => {
    assert.equal(ran.code, 0, ran.output);
    assert.match(ran.output, /vscode:prepublish/);
    assert.doesNotMatch(ran.output, /WARNING|Do you want to continue/, ran.output);
    assert.ok(entries.size > 0, 'gpuemu.vsix was written');
  });

  it('holds only what runs: out/ without tests or source maps, package.json, README and LICENSE', () => {
    // One out/X.js per src/X.ts; src/test and src/testsupport are subfolders and stay out.
    const modules = fs
      .readdirSync(path.join(ROOT, 'src'))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `extension/out/${name.replace(/\.ts$/, '.js')}`);
    assert.deepEqual(
      [...entries.keys()].sort(),
      [
        '[Content_Types].xml',
        'extension.vsixmanifest',
        'extension/LICENSE.txt',
        'extension/package.json',
        'extension/readme.md',
        ...modules,
      ].sort(),
    );
    assert.ok(entries.has(`extension/${manifest.main.replace(/^\.\//, '')}`), 'the entry point is packaged');
  });

  it('packages every module the code requires, other than vscode and node built-ins', () => {
    const builtins = new Set(builtinModules);
    for (const [name, data] of entries) {
      if (!name.startsWith('extension/out/')) continue;
      for (const [, request] of data.toString('utf8').matchAll(/\brequire\("([^"]+)"\)/g)) {
        if (request === 'vscode' || builtins.has(request.replace(/^node:/, ''))) continue;
        assert.ok(request.startsWith('.'), `${name} requires ${request}, which the .vsix does not hold`);
        const target = path.posix.join(path.posix.dirname(name), `${request}.js`);
        assert.ok(entries.has(target), `${name} requires ${request}: ${target} is not packaged`);
      }
    }
  });

  it('carries a publishable manifest: not private, with publisher, name, version, repository and licence', () => {
    const packaged = JSON.parse(entries.get('extension/package.json')!.toString('utf8'));
    assert.equal(packaged.private, undefined);
    assert.equal(packaged.publisher, 'gpuemu');
    assert.equal(packaged.name, 'gpuemu');
    assert.equal(packaged.version, manifest.version);
    assert.match(packaged.version, /^\d+\.\d+\.\d+$/);
    assert.equal(packaged.license, '(MIT OR Apache-2.0)');
    assert.match(packaged.repository.url, /^https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
    // The marketplace id is publisher.name, the one `code --install-extension gpuemu.gpuemu` names.
    const vsixManifest = entries.get('extension.vsixmanifest')!.toString('utf8');
    assert.match(vsixManifest, new RegExp(`<Identity [^>]*Id="gpuemu" Version="${packaged.version}"`));
    assert.match(vsixManifest, /<Identity [^>]*Publisher="gpuemu"/);
    assert.match(vsixManifest, /<License>extension\/LICENSE\.txt<\/License>/);
    assert.deepEqual(entries.get('extension/LICENSE.txt'), fs.readFileSync(path.join(ROOT, 'LICENSE')));
  });
});

describe('vscode/LICENSE', () => {
  it("holds the repository's two licence texts unchanged, since the .vsix carries only this folder", () => {
    const license = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    assert.match(license, /MIT License or of the Apache License, Version 2\.0, at your option/);
    for (const file of ['LICENSE-MIT', 'LICENSE-APACHE']) {
      const text = fs.readFileSync(path.join(REPO, file), 'utf8');
      assert.ok(license.includes(text), `vscode/LICENSE does not contain ${file} as it is`);
    }
  });
});
