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

/// `threads` - 1 worker threads plus the calling thread. parallel_for splits [0, n) into size()
/// contiguous ranges, one per participant (range i goes to participant i; the caller takes range
/// 0), and returns when all are done. Workers spin briefly on a new job before sleeping on a
/// condition variable, so back-to-back calls (one per matmul in a decode step) cost ~1 µs instead
/// of a futex wake-up.
///
/// Thread rules: parallel_for may be called from any thread; concurrent calls are serialized.
/// A parallel_for called from inside a task runs serially on that thread (no deadlock). The first
/// exception thrown by a task is rethrown to the caller after all ranges finished.
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
  void worker_loop(int index);
  void run_range(int index);

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // serializes parallel_for callers

  std::mutex mutex_;  // guards sleeping / waking
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};

  // The current job (written before generation_ is bumped).
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace plinth::cpu
