// What the extension flags, worst first, in the order of src/report/findings.cpp: one finding per
// failing (op, dtype), represented by its worst case, one per baseline regression and one per kernel
// lint violation; sorted by tier, tolerance used (NaN worst), op, then dtype.
import { FailureKind, Tier, findFailureKind } from './failureKinds';
import {
  Failure,
  LintKernel,
  LintReport,
  LintViolation,
  Regression,
  ResultDocument,
  decodeNumber,
} from './result';
import { SourceLocation, parseSource } from './source';

export interface Finding {
  kind: FailureKind; // of the worst case, or the "regression" / "lint_violation" row
  op: string; // the op, or the kernel's name for a lint violation
  dtype: string; // the dtype, or the lint check ("max_registers")
  location: SourceLocation; // as the document names it, relative to the project root or absolute
  worst?: Failure; // the worst failures[] entry of this (op, dtype)
  regression?: Regression;
  violation?: LintViolation;
  kernel?: LintKernel; // the kernel of `violation`
  cases: Failure[]; // every failures[] entry of this (op, dtype), in case order
  totalCases: number; // cases of this (op, dtype), 0 when unknown
}

// NaN tolerance usage means the comparison itself broke down: rank it above any finite value.
function severity(toleranceUsed: unknown): number {
  const value = decodeNumber(toleranceUsed);
  return Number.isNaN(value) ? Infinity : value;
}

function tierOf(failure: Failure): Tier {
  return findFailureKind(failure.kind)?.tier ?? Tier.Setup;
}

// Whether case `a` is worse than case `b`: a lower tier, then more of the tolerance used.
export function worseCase(a: Failure, b: Failure): boolean {
  const tierA = tierOf(a);
  const tierB = tierOf(b);
  if (tierA !== tierB) return tierA < tierB;
  return severity(a.tolerance_used) > severity(b.tolerance_used);
}

// Byte order of the UTF-8 forms, as std::string_view compares op and dtype names in C++.
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function findingSeverity(f: Finding): number {
  return f.worst ? severity(f.worst.tolerance_used) : 0;
}

export function compareFindings(a: Finding, b: Finding): number {
  if (a.kind.tier !== b.kind.tier) return a.kind.tier - b.kind.tier;
  const sa = findingSeverity(a);
  const sb = findingSeverity(b);
  if (sa !== sb) return sa > sb ? -1 : 1;
  return compareUtf8(a.op, b.op) || compareUtf8(a.dtype, b.dtype);
}

function lintFindings(lint: LintReport): Finding[] {
  const findings: Finding[] = [];
  for (const kernel of lint.kernels) {
    for (const violation of kernel.violations) {
      // The offending instruction when the check found one, else the kernel's definition.
      const where = violation.file !== '' ? violation : kernel;
      findings.push({
        kind: findFailureKind('lint_violation')!,
        op: kernel.name,
        dtype: violation.check,
        location: { path: where.file, line: where.line },
        violation,
        kernel,
        cases: [],
        totalCases: 0,
      });
    }
  }
  return findings;
}

// Findings of a validated result document, worst first. `lint`, when given (a later
// `gpuemu lint --format json`), takes the place of the document's ci.lint; either may be absent.
export function collectFindings(result: ResultDocument | undefined, lint?: LintReport | null): Finding[] {
  const findings: Finding[] = [];
  const locations = new Map<string, SourceLocation>();
  for (const op of result?.ops ?? []) {
    const location = parseSource(op.source);
    const byDtype = new Map<string, Finding>();
    for (const failure of op.failures) {
      let f = byDtype.get(failure.dtype);
      if (!f) {
        const summary = op.dtypes.find((d) => d.dtype === failure.dtype);
        f = {
          kind: findFailureKind(failure.kind)!,
          op: op.op,
          dtype: failure.dtype,
          location,
          cases: [],
          totalCases: summary?.total ?? 0,
        };
        byDtype.set(failure.dtype, f);
        findings.push(f);
      }
      f.cases.push(failure);
      if (!f.worst || worseCase(failure, f.worst)) f.worst = failure;
    }
    locations.set(op.op, location);
  }
  for (const f of findings) f.kind = findFailureKind(f.worst!.kind)!;

  for (const regression of result?.ci?.baseline?.regressions ?? []) {
    findings.push({
      kind: findFailureKind('regression')!,
      op: regression.op,
      dtype: regression.dtype,
      location: locations.get(regression.op) ?? { path: '', line: 0 },
      regression,
      cases: [],
      totalCases: 0,
    });
  }

  const lintReport = lint ?? result?.ci?.lint;
  if (lintReport) findings.push(...lintFindings(lintReport));
  // Array.prototype.sort is stable, as std::stable_sort.
  return findings.sort(compareFindings);
}

// "seed 123: <message>" for a case, the reason for a regression, the check's message for a lint
// violation: the finding in one line.
export function headline(f: Finding): string {
  if (f.regression) return f.regression.reason;
  if (f.violation) return f.violation.message;
  return f.worst ? `seed ${f.worst.seed}: ${f.worst.message}` : '';
}

// The command line that replays the finding, as the reports print it; empty for a regression.
export function replayText(f: Finding): string {
  if (f.violation) return `gpuemu lint --kernel ${f.op}`;
  return f.worst?.replay ?? '';
}

// "; shapes a [5, 7], b [7, 3]": the worst case's input shapes (result.json "shapes"), in the order
// the result lists them; empty when the result has none (older results, a lint finding).
export function shapesText(c: Failure): string {
  const shapes = c.shapes;
  if (shapes === null || typeof shapes !== 'object' || Array.isArray(shapes)) return '';
  const parts = Object.entries(shapes as Record<string, unknown>)
    .filter(([, dims]) => Array.isArray(dims))
    .map(([name, dims]) => `${name} [${(dims as unknown[]).join(', ')}]`);
  return parts.length > 0 ? `; shapes ${parts.join(', ')}` : '';
}

// "op[float32]": how every report names an (op, dtype).
export function label(f: Finding): string {
  return `${f.op}[${f.dtype}]`;
}

// The finding for a diagnostic or a quick-pick entry: the first line says what and where it failed,
// the next how often, the last how to replay it.
export function describe(f: Finding): string {
  const lines = [`${label(f)} ${f.kind.title}: ${headline(f)}`];
  if (f.worst) {
    const of = f.totalCases > 0 ? ` of ${f.totalCases}` : '';
    const noun = f.totalCases === 1 || (f.totalCases === 0 && f.cases.length === 1) ? 'case' : 'cases';
    lines.push(
      `${f.cases.length}${of} ${noun} failed (${f.worst.kind}, ${f.worst.layout ?? 'contiguous'}, ` +
        `${f.worst.distribution ?? 'regular'} values)${shapesText(f.worst)}`,
    );
  }
  const replay = replayText(f);
  if (replay) lines.push(`Replay: ${replay}`);
  return lines.join('\n');
}

// One failing case a person may pick to reproduce or minimize.
export interface CasePick {
  seed: string;
  op: string;
  dtype: string;
  kind: string;
  message: string;
  worst: boolean; // the finding's worst case
}

// Every failing case of the findings, worst finding first; within a finding its worst case, then the
// others in case order.
export function casePicks(findings: Finding[]): CasePick[] {
  const picks: CasePick[] = [];
  for (const f of findings) {
    if (!f.worst) continue;
    const ordered = [f.worst, ...f.cases.filter((c) => c !== f.worst)];
    for (const c of ordered) {
      picks.push({
        seed: c.seed,
        op: f.op,
        dtype: f.dtype,
        kind: c.kind,
        message: c.message,
        worst: c === f.worst,
      });
    }
  }
  return picks;
}
