// The failure kinds of result.json as the extension presents them: the rows of failureKindTable.ts,
// generated from src/check/failure_kinds.cpp (the one table), and the lookups the views use.
import { FailureKind, KINDS, Tier } from './failureKindTable';

export { FailureKind, Tier };

export function failureKinds(): readonly FailureKind[] {
  return KINDS;
}

export function findFailureKind(name: string): FailureKind | undefined {
  return KINDS.find((kind) => kind.name === name);
}

// Whether a case in ops[].failures may have this kind (not the report-only rows).
export function isCaseKind(name: string): boolean {
  return findFailureKind(name)?.caseKind === true;
}
