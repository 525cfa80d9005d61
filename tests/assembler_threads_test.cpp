// The assembler threads: a job goes to the most recently idle thread (its
// arena is warm), concurrent jobs get threads of their own, and a job's
// exception reaches the caller.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compiler/nvptx/assembler_threads.hpp"

using kiln::nvptx::run_on_assembler_thread;

namespace {

std::thread::id assembler_id() {
  std::thread::id id;
  run_on_assembler_thread([&] { id = std::this_thread::get_id(); });
  return id;
}

} // namespace

TEST_CASE("assembler threads: consecutive jobs run on the thread that ran the last one") {
  // Two jobs at once start a second thread; then both are idle.
  std::atomic<int> started{0};
  auto hold = [&] {
    ++started;
    while (started.load() < 2)
      std::this_thread::yield();
  };
  std::thread other([&] { run_on_assembler_thread(hold); });
  run_on_assembler_thread(hold);
  other.join();

  const std::thread::id last = assembler_id();
  for (int i = 0; i < 20; ++i)
    CHECK(assembler_id() == last);
}

TEST_CASE("assembler threads: jobs submitted together run at the same time") {
  constexpr int kJobs = 2;
  std::atomic<int> inside{0}, peak{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kJobs; ++i)
    callers.emplace_back([&] {
      run_on_assembler_thread([&] {
        peak = std::max(peak.load(), ++inside);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (peak.load() < kJobs && std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        --inside;
      });
    });
  for (std::thread &t : callers)
    t.join();
  if (std::thread::hardware_concurrency() >= kJobs)
    CHECK(peak.load() == kJobs);
}

TEST_CASE(
    "assembler threads: a job's exception is rethrown to its caller, and the thread goes on") {
  CHECK_THROWS_WITH_AS(run_on_assembler_thread([] { throw std::runtime_error("ptx rejected"); }),
                       "ptx rejected", std::runtime_error);
  CHECK(assembler_id() != std::thread::id());
}
