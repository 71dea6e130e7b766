// Runs the same work on N threads that start together, each pinned to its own CPU when possible.
#pragma once

#include <functional>

namespace plinth::roofline {

/// Wall time of one parallel run.
struct ParallelRun {
  double seconds = 0;      // from the moment every thread finished `setup` to the last `work` end
  double cpu_seconds = 0;  // the largest CPU time one thread spent in `work` (its
                           // CLOCK_THREAD_CPUTIME_ID): excludes the time other processes held
                           // the core, so work / cpu_seconds is the core's rate, not our share
  bool pinned = false;     // every thread was pinned to a distinct CPU of the process's mask
};

/// Starts `n` std::threads; thread i is pinned (pthread_setaffinity_np) to the i-th CPU of the
/// process's affinity mask when the mask has at least n CPUs, runs setup(i) (untimed: allocate,
/// warm caches), waits for the others at a barrier, then runs work(i). Returns once all threads
/// joined. `n` must be ≥ 1; setup and work must not throw (an exception ends the program, as any
/// escaping std::thread exception does). Call from one thread at a time.
ParallelRun run_pinned(int n, const std::function<void(int)>& setup,
                       const std::function<void(int)>& work);

}  // namespace plinth::roofline
