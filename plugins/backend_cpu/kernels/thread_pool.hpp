// A small fork-join pool for the kernels: persistent workers, no thread creation per call.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace plinth::cpu {

/// `threads` - 1 worker threads plus the calling thread. parallel_for splits [0, n) into up to
/// 8·size() contiguous chunks that the participants claim one at a time (an atomic counter tagged
/// with the job's generation), so when a worker is descheduled — the machine is shared — the
/// caller simply takes its chunks instead of waiting a whole time slice for it. Workers spin
/// briefly on a new job before sleeping on a condition variable, so back-to-back calls (one per
/// matmul in a decode step) cost ~1 µs instead of a futex wake-up.
///
/// Thread rules: parallel_for may be called from any thread; concurrent calls are serialized.
/// A parallel_for called from inside a task runs serially on that thread (no deadlock). The first
/// exception thrown by a task is rethrown to the caller after all chunks finished.
class ThreadPool {
 public:
  /// Throws std::invalid_argument when threads < 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);
  /// Participants, caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void worker_loop();
  // Claims and runs chunks of the job `gen` until none is left; false when that job is over.
  void run_chunks(uint32_t gen);

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // serializes parallel_for callers

  std::mutex mutex_;  // guards sleeping / waking
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};

  // The current job. `claim_` = generation << 32 | chunk count << 16 | next chunk, one word so a
  // claim is checked against its own job's count; fn_ and n_ are written before claim_ publishes
  // a new generation and are only read after a successful claim.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_chunks_{0};
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  uint32_t generation_ = 0;  // caller side only
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace plinth::cpu
