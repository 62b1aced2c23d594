// The status bar item's text and tooltip for the last result, without the vscode API.
import { Finding } from './findings';
import { ResultDocument, decodeNumber } from './result';

export interface Status {
  text: string; // with a codicon: $(pass) or $(error)
  tooltip: string;
  state: 'passed' | 'failed' | 'none' | 'unreadable';
}

export interface Counts {
  passed: number; // cases
  failed: number; // failed + errors, as the `failed` step output counts them
  lintViolations: number;
  regressions: number;
}

export function countResult(result: ResultDocument, findings: Finding[]): Counts {
  let passed = 0;
  let failed = 0;
  for (const op of result.ops) {
    passed += op.passed;
    failed += op.failed + op.errors;
  }
  return {
    passed,
    failed,
    lintViolations: findings.filter((f) => f.violation).length,
    regressions: findings.filter((f) => f.regression).length,
  };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function resultStatus(result: ResultDocument, findings: Finding[], resultFile: string): Status {
  const counts = countResult(result, findings);
  // `findings` may carry a later lint run than the result's ci.lint: a run that failed only its lint
  // passes once the lint is clean, and any lint violation fails it.
  const failedByLintOnly =
    !result.passed && result.ci?.lint?.passed === false && counts.failed === 0 && counts.regressions === 0;
  const passed = (result.passed || failedByLintOnly) && counts.lintViolations === 0;
  const parts = [passed ? `${counts.passed} passed` : `${counts.failed} failed, ${counts.passed} passed`];
  if (counts.regressions > 0) parts.push(plural(counts.regressions, 'regression', 'regressions'));
  if (counts.lintViolations > 0)
    parts.push(plural(counts.lintViolations, 'lint violation', 'lint violations'));
  const text = `$(${passed ? 'pass' : 'error'}) gpuemu ${parts.join(', ')}${result.partial ? ' (partial)' : ''}`;

  const seconds = decodeNumber(result.duration_secs);
  const tooltip = [
    `gpuemu ${result.command} of project "${result.project}": ${passed ? 'passed' : 'failed'}` +
      (result.partial ? ' (partial: not every planned case ran)' : ''),
    `${plural(counts.passed + counts.failed, 'case', 'cases')} in ${plural(result.ops.length, 'op', 'ops')}: ` +
      `${counts.passed} passed, ${counts.failed} failed`,
    `master seed ${result.seed}` + (Number.isFinite(seconds) ? `, ${seconds.toFixed(1)} s` : ''),
    resultFile,
  ];
  if (findings.length > 0)
    tooltip.push(`${plural(findings.length, 'finding', 'findings')} in the Problems panel`);
  return { text, tooltip: tooltip.join('\n'), state: passed ? 'passed' : 'failed' };
}

// No result yet, or one that cannot be read.
export function missingStatus(resultFile: string): Status {
  return {
    text: '$(beaker) gpuemu: no result',
    tooltip: `${resultFile} does not exist yet: run gpuemu: Run CI gate`,
    state: 'none',
  };
}

export function unreadableStatus(message: string): Status {
  return { text: '$(warning) gpuemu: unreadable result', tooltip: message, state: 'unreadable' };
}
