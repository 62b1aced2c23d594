// Starting warm workers through a fork server (python -m gpuemu.fork_server): one Python process
// per interpreter imports the worker once and forks each worker, instead of a new interpreter each.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "proc/spawn.hpp"

namespace gpuemu::proc {

// How long a fork server may take to start (its imports: numpy, and torch and Triton for a pytorch
// op's workers) before gpuemu gives up on it and starts workers as processes of its own.
inline constexpr std::chrono::milliseconds kForkServerStart{60000};

// Starts `spec` (a `PYTHON -m gpuemu.worker ...` command) as a fork of the fork server for its
// interpreter and start-up variables (PYTHON*, BLAS threads), starting that server on first use. nullopt when
// the spec is not a worker command, fork servers are off (GPUEMU_FORK_SERVER=0, or a system without
// platform::watches_process_exit), or the server cannot be
// started or has failed: the caller then spawns the worker itself, which reports any error in its own words.
// The child behaves as spawn_child's: its own process group, piped stdio, an exit watch; reap() asks
// the server. `start_timeout` bounds the server's start (its imports).
std::optional<SpawnedChild> spawn_from_fork_server(const SpawnSpec& spec,
                                                   std::chrono::milliseconds start_timeout);

// Starts the server spawn_from_fork_server would use for `spec` on a thread of its own and returns at
// once; a later spawn waits for that start. Nothing when the server exists or is starting, or when
// `spec` is not a worker command.
void start_fork_server_ahead(const SpawnSpec& spec);

// False when GPUEMU_FORK_SERVER=0 or the system cannot watch a process that is not its child end
// (platform::watches_process_exit): every worker is then an interpreter of its own.
bool fork_server_enabled();

}  // namespace gpuemu::proc
