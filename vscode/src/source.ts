// Where a finding lives: the op's `source` ("path:line", "path" or "") as
// src/report/result_document.cpp parses it, and paths made absolute against the project root.
import * as path from 'node:path';

export interface SourceLocation {
  path: string; // empty when the op names no source
  line: number; // 1-based; 0 when the source names no line
}

// "kernels/matmul.py:12" -> {kernels/matmul.py, 12}; the last colon counts, and only when 1 to 9
// digits follow it and something precedes it, so "C:\\x.py" and "a:b" stay whole paths.
export function parseSource(source: string): SourceLocation {
  const colon = source.lastIndexOf(':');
  if (colon > 0 && colon + 1 < source.length) {
    const digits = source.slice(colon + 1);
    if (/^[0-9]{1,9}$/.test(digits))
      return { path: source.slice(0, colon), line: Number.parseInt(digits, 10) };
  }
  return { path: source, line: 0 };
}

// Paths in result.json are relative to the project root (the directory of gpuemu.toml) or absolute.
export function resolveInProject(file: string, projectRoot: string): string {
  return path.isAbsolute(file) ? path.normalize(file) : path.resolve(projectRoot, file);
}

// The 1-based line of `[[ops]]` or `[[kernels]]` entry `name` in a gpuemu.toml's text, for findings
// whose op names no source; 0 when the entry is not found by this plain textual search.
export function findEntryLine(tomlText: string, table: 'ops' | 'kernels', name: string): number {
  const lines = tomlText.split(/\r?\n/);
  let inTable = false;
  for (let i = 0; i < lines.length; ++i) {
    const line = lines[i].trim();
    if (line.startsWith('[')) inTable = line.replace(/\s+/g, '') === `[[${table}]]`;
    const match = /^name\s*=\s*(?:"([^"\\]*)"|'([^']*)')\s*(?:#.*)?$/.exec(line);
    if (inTable && match && (match[1] ?? match[2]) === name) return i + 1;
  }
  return 0;
}
