// Reading result.json, schema version 1 (docs/result-json.md), and the output of
// `gpuemu lint --format json`: one pass that names the first offending field, as
// src/report/result_document.cpp does, so a damaged or foreign file gives a message, not a half view.
import { isCaseKind } from './failureKinds';

export const SCHEMA_VERSION = 1;

// A number of result.json: a JSON number, or "NaN", "Infinity", "-Infinity".
export type JsonNumber = number | 'NaN' | 'Infinity' | '-Infinity';

export interface Failure {
  seed: string;
  case?: number;
  op: string;
  kind: string;
  dtype: string;
  message: string;
  replay: string;
  layout?: string;
  distribution?: string;
  tolerance_used?: JsonNumber;
  [field: string]: unknown;
}

export interface DtypeSummary {
  dtype: string;
  total: number;
  passed: number;
  failed: number;
  errors: number;
  tolerance_used: JsonNumber;
  [field: string]: unknown;
}

export interface OpResult {
  op: string;
  source: string;
  total: number;
  passed: number;
  failed: number;
  errors: number;
  dtypes: DtypeSummary[];
  failures: Failure[];
}

export interface Regression {
  op: string;
  dtype: string;
  reason: string;
  [field: string]: unknown;
}

export interface LintViolation {
  check: string;
  message: string;
  file: string; // empty when the check found no instruction to point at
  line: number;
  [field: string]: unknown;
}

export interface LintKernel {
  name: string;
  file: string; // where the kernel is defined, relative to the project root
  line: number;
  passed: boolean;
  violations: LintViolation[];
  [field: string]: unknown;
}

// ci.lint of result.json, and what `gpuemu lint --format json` prints.
export interface LintReport {
  kernels: LintKernel[];
  passed: boolean;
  [field: string]: unknown;
}

export interface ResultDocument {
  schema_version: 1;
  tool: { name: string; version: string };
  command: string;
  passed: boolean;
  partial: boolean;
  seed: string;
  config_digest: string;
  project: string;
  duration_secs: JsonNumber;
  ops: OpResult[];
  ci?: {
    quick: boolean;
    shard: string | null;
    baseline: { regressions?: Regression[]; warnings?: string[]; [field: string]: unknown } | null;
    lint: LintReport | null;
  } | null;
}

// A document that cannot be shown, with the message for the person who has to fix it.
export class ResultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResultError';
  }
}

type Want = 'string' | 'boolean' | 'count' | 'number' | 'array' | 'object' | 'seed';

const DESCRIBE: Record<Want, string> = {
  string: 'a string',
  boolean: 'true or false',
  count: 'a non-negative integer',
  number: 'a number or "NaN", "Infinity", "-Infinity"',
  array: 'an array',
  object: 'an object',
  seed: 'a seed as a decimal string',
};

// Seeds are unsigned 64-bit integers written as decimal strings; 20 digits may still exceed 2^64 - 1.
export function isSeed(value: unknown): value is string {
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) return false;
  return value.length < 20 || value <= '18446744073709551615';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function matches(value: unknown, want: Want): boolean {
  switch (want) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'count':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0;
    case 'number':
      return typeof value === 'number' || value === 'NaN' || value === 'Infinity' || value === '-Infinity';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'seed':
      return isSeed(value);
  }
}

// Walks a document; the first problem found becomes the error, naming its JSON path.
class Validator {
  private error: string | undefined;

  constructor(
    private readonly name: string,
    private readonly what: string,
  ) {}

  field(object: Record<string, unknown>, where: string, key: string, want: Want, required = true): boolean {
    if (!(key in object)) {
      if (required) this.problem(`${where}.${key}`, 'is missing');
      return !required;
    }
    const value = object[key];
    if (!matches(value, want)) {
      let shown = JSON.stringify(value) ?? String(value);
      if (shown.length > 40) shown = `${shown.slice(0, 40)}...`;
      this.problem(`${where}.${key}`, `should be ${DESCRIBE[want]}, found ${shown}`);
      return false;
    }
    return true;
  }

  problem(where: string, what: string): void {
    if (this.error !== undefined) return;
    const path = where.startsWith('.') ? where.slice(1) : where;
    this.error = `${this.name}: ${path} ${what}; ${this.what}`;
  }

  fail(message: string): void {
    if (this.error === undefined) this.error = message;
  }

  get ok(): boolean {
    return this.error === undefined;
  }

  check(): void {
    if (this.error !== undefined) throw new ResultError(this.error);
  }
}

const NOT_A_RESULT =
  'the file is not a gpuemu result.json version 1 (regenerate it with `gpuemu: Run CI gate` or `gpuemu ci run`)';

function validateFailure(v: Validator, f: unknown, where: string): void {
  if (!isObject(f)) return v.problem(where, 'should be an object');
  v.field(f, where, 'seed', 'seed');
  v.field(f, where, 'op', 'string');
  if (v.field(f, where, 'kind', 'string') && !isCaseKind(f.kind as string)) {
    v.problem(`${where}.kind`, `names an unknown failure kind "${f.kind as string}"`);
  }
  v.field(f, where, 'dtype', 'string');
  v.field(f, where, 'message', 'string');
  v.field(f, where, 'replay', 'string');
  for (const key of ['layout', 'distribution', 'stderr']) v.field(f, where, key, 'string', false);
  for (const key of ['shapes', 'dims']) v.field(f, where, key, 'object', false);
  for (const key of ['max_abs', 'max_rel', 'max_ulp', 'tolerance_used', 'atol', 'rtol']) {
    v.field(f, where, key, 'number', false);
  }
  for (const key of ['mismatches', 'elements', 'case']) v.field(f, where, key, 'count', false);
  if (v.field(f, where, 'worst', 'array', false) && Array.isArray(f.worst)) {
    f.worst.forEach((w: unknown, i: number) => {
      const at = `${where}.worst[${i}]`;
      if (!isObject(w)) return v.problem(at, 'should be an object');
      v.field(w, at, 'index', 'array', false);
      for (const key of ['actual', 'expected', 'abs_err', 'rel_err']) v.field(w, at, key, 'number', false);
    });
  }
}

function validateOp(v: Validator, op: unknown, where: string): void {
  if (!isObject(op)) return v.problem(where, 'should be an object');
  v.field(op, where, 'op', 'string');
  v.field(op, where, 'source', 'string');
  for (const key of ['total', 'passed', 'failed', 'errors']) v.field(op, where, key, 'count');
  if (v.field(op, where, 'dtypes', 'array')) {
    const dtypes = op.dtypes as unknown[];
    for (let i = 0; i < dtypes.length && v.ok; ++i) {
      const d = dtypes[i];
      const at = `${where}.dtypes[${i}]`;
      if (!isObject(d)) return v.problem(at, 'should be an object');
      v.field(d, at, 'dtype', 'string');
      for (const key of ['total', 'passed', 'failed', 'errors']) v.field(d, at, key, 'count');
      for (const key of ['max_abs', 'max_rel', 'max_ulp', 'tolerance_used', 'atol', 'rtol']) {
        v.field(d, at, key, 'number');
      }
    }
  }
  if (v.field(op, where, 'failures', 'array')) {
    const failures = op.failures as unknown[];
    for (let i = 0; i < failures.length && v.ok; ++i)
      validateFailure(v, failures[i], `${where}.failures[${i}]`);
  }
}

function validateLintReport(v: Validator, lint: Record<string, unknown>, where: string): void {
  if (!v.field(lint, where, 'kernels', 'array')) return;
  v.field(lint, where, 'passed', 'boolean');
  const kernels = lint.kernels as unknown[];
  for (let i = 0; i < kernels.length && v.ok; ++i) {
    const k = kernels[i];
    const at = `${where}.kernels[${i}]`;
    if (!isObject(k)) return v.problem(at, 'should be an object');
    for (const key of ['name', 'file']) v.field(k, at, key, 'string');
    v.field(k, at, 'line', 'count');
    v.field(k, at, 'passed', 'boolean');
    if (!v.field(k, at, 'violations', 'array')) continue;
    const violations = k.violations as unknown[];
    for (let j = 0; j < violations.length && v.ok; ++j) {
      const violation = violations[j];
      const vat = `${at}.violations[${j}]`;
      if (!isObject(violation)) return v.problem(vat, 'should be an object');
      for (const key of ['check', 'message', 'file']) v.field(violation, vat, key, 'string');
      v.field(violation, vat, 'line', 'count');
    }
  }
}

function validateCi(v: Validator, ci: Record<string, unknown>): void {
  v.field(ci, 'ci', 'quick', 'boolean');
  if (ci.shard !== undefined && ci.shard !== null) v.field(ci, 'ci', 'shard', 'string');
  if (ci.lint !== undefined && ci.lint !== null && v.field(ci, 'ci', 'lint', 'object')) {
    validateLintReport(v, ci.lint as Record<string, unknown>, 'ci.lint');
  }
  if (ci.baseline === undefined || ci.baseline === null) return;
  if (!v.field(ci, 'ci', 'baseline', 'object')) return;
  const baseline = ci.baseline as Record<string, unknown>;
  v.field(baseline, 'ci.baseline', 'regressions', 'array', false);
  v.field(baseline, 'ci.baseline', 'warnings', 'array', false);
  if (!Array.isArray(baseline.regressions)) return;
  const regressions = baseline.regressions as unknown[];
  for (let i = 0; i < regressions.length && v.ok; ++i) {
    const r = regressions[i];
    const at = `ci.baseline.regressions[${i}]`;
    if (!isObject(r)) return v.problem(at, 'should be an object');
    for (const key of ['op', 'dtype', 'reason']) v.field(r, at, key, 'string');
  }
}

// Checks a parsed document against docs/result-json.md; throws a ResultError naming `name` and the
// first offending field.
export function validateResult(document: unknown, name: string): ResultDocument {
  const v = new Validator(name, NOT_A_RESULT);
  if (!isObject(document)) {
    v.problem('(document)', 'should be a JSON object');
    v.check();
  }
  const result = document as Record<string, unknown>;
  if (v.field(result, '', 'schema_version', 'count') && result.schema_version !== SCHEMA_VERSION) {
    v.fail(
      `${name}: schema_version is ${String(result.schema_version)} but this extension reads version ` +
        `${SCHEMA_VERSION}; update the gpuemu extension to the release of the gpuemu that wrote it`,
    );
  }
  if (v.field(result, '', 'tool', 'object')) {
    const tool = result.tool as Record<string, unknown>;
    v.field(tool, 'tool', 'name', 'string');
    v.field(tool, 'tool', 'version', 'string');
  }
  v.field(result, '', 'command', 'string');
  v.field(result, '', 'passed', 'boolean');
  v.field(result, '', 'partial', 'boolean');
  v.field(result, '', 'seed', 'seed');
  v.field(result, '', 'config_digest', 'string');
  v.field(result, '', 'project', 'string');
  v.field(result, '', 'duration_secs', 'number');
  if (v.field(result, '', 'ops', 'array')) {
    const ops = result.ops as unknown[];
    for (let i = 0; i < ops.length && v.ok; ++i) validateOp(v, ops[i], `ops[${i}]`);
  }
  if (v.ok && result.ci !== undefined && result.ci !== null && v.field(result, '', 'ci', 'object')) {
    validateCi(v, result.ci as Record<string, unknown>);
  }
  v.check();
  return result as unknown as ResultDocument;
}

function parseJson(text: string, name: string, hint: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new ResultError(`${name}: not valid JSON (${reason}); ${hint}`);
  }
}

// Parses and validates the text of a result.json.
export function parseResult(text: string, name: string): ResultDocument {
  if (text.trim() === '') {
    throw new ResultError(
      `${name}: the file is empty; regenerate it with \`gpuemu: Run CI gate\` or \`gpuemu ci run\``,
    );
  }
  const document = parseJson(
    text,
    name,
    'truncated or not a result.json: regenerate it with `gpuemu ci run`',
  );
  return validateResult(document, name);
}

// Parses and validates what `gpuemu lint --format json` printed.
export function parseLintReport(text: string, name: string): LintReport {
  const document = parseJson(text, name, 'expected the JSON document of `gpuemu lint --format json`');
  const v = new Validator(name, 'expected the JSON document of `gpuemu lint --format json` (docs/lint.md)');
  if (!isObject(document)) {
    v.problem('(document)', 'should be a JSON object');
    v.check();
  }
  validateLintReport(v, document as Record<string, unknown>, '');
  v.check();
  return document as LintReport;
}

// A result.json number as a double: the non-finite strings become NaN and the infinities.
export function decodeNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  return NaN;
}
