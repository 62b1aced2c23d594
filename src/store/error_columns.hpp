// The columns failures and results both carry: the worst errors measured and the tolerance they
// were judged by, bound and read once for both tables, under each list's names (columns.hpp).
#pragma once

#include "store/columns.hpp"
#include "store/sqlite.hpp"

namespace gpuemu::store::columns {

// `measured` is a check::ErrorStats (a failure) or a result::DtypeSummary (a result): both have
// max_abs, max_rel, max_ulp and tolerance_used; `tolerance` has atol and rtol.
template <const auto& kWriteList, class Measured, class Tolerance>
void bind_errors(sqlite::Statement& statement, const Measured& measured, const Tolerance& tolerance) {
  statement.bind(param(kWriteList, "max_abs"), measured.max_abs)
      .bind(param(kWriteList, "max_rel"), measured.max_rel)
      .bind(param(kWriteList, "max_ulp"), measured.max_ulp)
      .bind(param(kWriteList, "tolerance_used"), measured.tolerance_used)
      .bind(param(kWriteList, "atol"), tolerance.atol)
      .bind(param(kWriteList, "rtol"), tolerance.rtol);
}

// The same columns read back from a row of `kReadList`, whose table is `kAlias` ('f', 'x').
template <const auto& kReadList, char kAlias, class Measured, class Tolerance>
void read_errors(const sqlite::Statement& row, Measured& measured, Tolerance& tolerance) {
  measured.max_abs = row.column_double(at(kReadList, kAlias, "max_abs"));
  measured.max_rel = row.column_double(at(kReadList, kAlias, "max_rel"));
  measured.max_ulp = row.column_double(at(kReadList, kAlias, "max_ulp"));
  measured.tolerance_used = row.column_double(at(kReadList, kAlias, "tolerance_used"));
  tolerance.atol = row.column_double(at(kReadList, kAlias, "atol"));
  tolerance.rtol = row.column_double(at(kReadList, kAlias, "rtol"));
}

}  // namespace gpuemu::store::columns
