// Findings as Problems-panel entries, without the vscode API: which file and line each goes to,
// its severity and message. extension.ts turns these into vscode.Diagnostic objects.
import * as path from 'node:path';

import { Tier } from './failureKinds';
import { Finding, describe } from './findings';
import { findEntryLine, resolveInProject } from './source';

export type Severity = 'error' | 'warning';

export interface DiagnosticSpec {
  file: string; // absolute
  line: number; // 0-based
  severity: Severity;
  message: string;
  code: string; // the SARIF rule id, e.g. GPUEMU-MISMATCH
  rank: number; // 1 for the worst finding
  finding: Finding;
}

// Wrong results and numeric drift are errors; regressions, kernel cost and a broken reference are
// warnings, so the Problems panel's severity order agrees with the tiers.
export function severityOf(tier: Tier): Severity {
  return tier === Tier.WrongResult || tier === Tier.Numeric ? 'error' : 'warning';
}

export interface Where {
  root: string; // the project root
  config?: string; // the gpuemu.toml, where findings without a source go
  configText?: string; // its text, to point at the op's or kernel's entry
}

// One entry per finding, in the findings' order (worst first). A finding whose op names no source
// goes to the op's entry in gpuemu.toml, as SARIF falls back to the config file.
export function diagnosticsFor(findings: Finding[], where: Where): DiagnosticSpec[] {
  const config = where.config ?? path.join(where.root, 'gpuemu.toml');
  return findings.map((finding, i) => {
    let file: string;
    let line: number;
    if (finding.location.path !== '') {
      file = resolveInProject(finding.location.path, where.root);
      line = finding.location.line;
    } else {
      file = config;
      const table = finding.violation ? 'kernels' : 'ops';
      line = where.configText !== undefined ? findEntryLine(where.configText, table, finding.op) : 0;
    }
    return {
      file,
      line: Math.max(line - 1, 0),
      severity: severityOf(finding.kind.tier),
      message: describe(finding),
      code: finding.kind.ruleId,
      rank: i + 1,
      finding,
    };
  });
}

// The entries grouped by file, each file's entries worst first, files in the order of their worst.
export function byFile(specs: DiagnosticSpec[]): Map<string, DiagnosticSpec[]> {
  const files = new Map<string, DiagnosticSpec[]>();
  for (const spec of specs) {
    const list = files.get(spec.file);
    if (list) list.push(spec);
    else files.set(spec.file, [spec]);
  }
  return files;
}
