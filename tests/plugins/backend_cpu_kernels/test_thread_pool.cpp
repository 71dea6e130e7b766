#include "thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace plinth::cpu {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 3, 7, 193, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (int rep = 0; rep < 50; ++rep) {
        pool.parallel_for(n, [&](int64_t b, int64_t e) {
          ASSERT_LT(b, e);
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        });
      }
      for (auto& h : hits) ASSERT_EQ(h.load(), 50) << "threads=" << threads << " n=" << n;
    }
  }
}

// Regression (CI segfault): a worker that had just finished the last chunk of a job with few
// chunks could claim "chunk k" of that old job after the caller had published the chunk count of
// the next, larger job but not yet its generation, and then run the next job's function (or a
// dangling one) on top of the participants of the new job. Jobs of alternating chunk counts, back
// to back, with a worker count above the cores, make that window likely; every index of every job
// must still be run exactly once.
TEST(ThreadPool, AlternatingJobSizesNeverRunAChunkTwice) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(64);
  for (int rep = 0; rep < 20000; ++rep) {
    const int64_t n = rep % 2 == 0 ? 2 : 64;
    for (int64_t i = 0; i < n; ++i) hits[static_cast<size_t>(i)].store(0);
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
          << "job " << rep << " n=" << n << " i=" << i;
    }
  }
}

TEST(ThreadPool, WorkersTakeChunksWhileTheCallerIsBusy) {
  ThreadPool pool(2);
  std::atomic<int> other{0};
  const auto caller = std::this_thread::get_id();
  pool.parallel_for(2, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      other++;
      return;
    }
    // The caller holds its chunk until a worker has run the other one (10 s at most).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (other.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(other.load(), 1);
}

TEST(ThreadPool, RethrowsTaskExceptionsAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(10,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, NestedCallsRunSeriallyWithoutDeadlock) {
  ThreadPool pool(2);
  std::atomic<int64_t> count{0};
  pool.parallel_for(4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.parallel_for(10, [&](int64_t b2, int64_t e2) { count += e2 - b2; });
    }
  });
  EXPECT_EQ(count.load(), 40);
}

TEST(ThreadPool, ConcurrentCallersAreSerialized) {
  ThreadPool pool(2);
  std::atomic<int64_t> count{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep) {
        pool.parallel_for(16, [&](int64_t b, int64_t e) { count += e - b; });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(count.load(), 3 * 200 * 16);
}

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_THROW(ThreadPool(0), std::invalid_argument);
}

}  // namespace
}  // namespace plinth::cpu
