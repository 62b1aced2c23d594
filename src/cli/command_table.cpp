// The subcommands, one row each (STYLE item 10). Add a command by writing cli/cmd_NAME.cpp
// with a factory and adding its declaration and row here.
#include "cli/command.hpp"

#include <array>

namespace gpuemu::cli {

std::unique_ptr<Command> make_init_command();
std::unique_ptr<Command> make_test_command();
std::unique_ptr<Command> make_fuzz_command();
std::unique_ptr<Command> make_reproduce_command();
std::unique_ptr<Command> make_version_command();
std::unique_ptr<Command> make_results_command();
std::unique_ptr<Command> make_failures_command();
std::unique_ptr<Command> make_show_command();
std::unique_ptr<Command> make_minimize_command();
std::unique_ptr<Command> make_calibrate_command();
std::unique_ptr<Command> make_baseline_store_command();
std::unique_ptr<Command> make_baseline_compare_command();
std::unique_ptr<Command> make_baseline_export_command();
std::unique_ptr<Command> make_baseline_import_command();
std::unique_ptr<Command> make_baseline_list_command();
std::unique_ptr<Command> make_baseline_push_command();
std::unique_ptr<Command> make_baseline_pull_command();
std::unique_ptr<Command> make_report_merge_command();
std::unique_ptr<Command> make_keygen_command();
std::unique_ptr<Command> make_report_sign_command();
std::unique_ptr<Command> make_report_verify_command();
std::unique_ptr<Command> make_report_render_command();
std::unique_ptr<Command> make_lint_command();
std::unique_ptr<Command> make_ci_run_command();
std::unique_ptr<Command> make_ci_publish_command();
std::unique_ptr<Command> make_artifacts_command();
std::unique_ptr<Command> make_daemon_start_command();
std::unique_ptr<Command> make_daemon_stop_command();
std::unique_ptr<Command> make_daemon_status_command();
std::unique_ptr<Command> make_daemon_logs_command();

namespace {

const std::array kCommands = {
    CommandRow{"init", "Write a starter project: gpuemu.toml, an op stub, its reference and a CI workflow",
               &make_init_command},
    CommandRow{"test", "Run every op at each of its dtypes on a small fixed set of cases",
               &make_test_command},
    CommandRow{"fuzz", "Run seeded, operator-aware random cases against each op", &make_fuzz_command},
    CommandRow{"reproduce", "Re-run one case from its seed and show the verdict and worst elements",
               &make_reproduce_command},
    CommandRow{"version", "Print the gpuemu version", &make_version_command},
    CommandRow{"results", "List stored results per op and dtype, newest first", &make_results_command},
    CommandRow{"failures", "List stored failures, newest first", &make_failures_command},
    CommandRow{"show", "Show everything stored about one failing case", &make_show_command},
    CommandRow{"minimize", "Shrink a failing case to a minimal one that fails the same way",
               &make_minimize_command},
    CommandRow{"calibrate", "Fit per-dtype tolerances from a trusted implementation",
               &make_calibrate_command},
    CommandRow{"baseline store", "Save the newest run's outcome under a tag", &make_baseline_store_command},
    CommandRow{"baseline compare", "Compare the newest run with a baseline; exit 1 on regressions",
               &make_baseline_compare_command},
    CommandRow{"baseline export", "Write a stored baseline as a versioned JSON document",
               &make_baseline_export_command},
    CommandRow{"baseline import", "Store a baseline document written by export",
               &make_baseline_import_command},
    CommandRow{"baseline list", "List stored baseline tags", &make_baseline_list_command},
    CommandRow{"baseline push", "Push a baseline to artifact storage (default branch only unless --force)",
               &make_baseline_push_command},
    CommandRow{"baseline pull", "Fetch a baseline from artifact storage; a missing one is a warning",
               &make_baseline_pull_command},
    CommandRow{"report merge", "Merge the outputs of sharded ci runs into one result.json and every report",
               &make_report_merge_command},
    CommandRow{"keygen", "Write an Ed25519 key pair for signing reports (gpuemu.key 0600, gpuemu.pub)",
               &make_keygen_command},
    CommandRow{"report sign", "Sign a result.json as a Kernel Correctness Report (DSSE, in-toto)",
               &make_report_sign_command},
    CommandRow{"report verify", "Verify a signed report offline against a public key (exit 1 if invalid)",
               &make_report_verify_command},
    CommandRow{"report render", "Render a signed report (or a result.json) as HTML or Markdown",
               &make_report_render_command},
    CommandRow{
        "ci run",
        "The CI gate: fuzz every op, write result.json, JUnit, SARIF and summary.md; exit 1 on failures",
        &make_ci_run_command},
    CommandRow{"ci publish",
               "Post a ci run's findings as one pull-request review with comments on diff lines",
               &make_ci_publish_command},
    CommandRow{"lint",
               "PTX/SASS metrics and artifact checks of the [[kernels]] or of FILEs; exit 1 on violations",
               &make_lint_command},
    CommandRow{"daemon start",
               "Run the daemon (NNG on $GPUEMU_HOME/gpuemu.sock) for the Python client and --daemon",
               &make_daemon_start_command},
    CommandRow{"daemon stop", "Ask the running daemon to finish in-flight requests and exit",
               &make_daemon_stop_command},
    CommandRow{"daemon status", "Show whether the daemon runs: pid, version, uptime (exit 1 if not running)",
               &make_daemon_status_command},
    CommandRow{"daemon logs", "Print the end of the daemon log ($GPUEMU_HOME/logs/daemon.log)",
               &make_daemon_logs_command},
    CommandRow{"artifacts", "Kernel metric baselines: 'artifacts baseline store TAG', 'artifacts diff TAG'",
               &make_artifacts_command},
};

}  // namespace

std::span<const CommandRow> command_table() {
  return kCommands;
}

}  // namespace gpuemu::cli
