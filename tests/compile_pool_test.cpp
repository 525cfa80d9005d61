// Tests of the async layer by itself: async::Job (claim, execute, wait,
// finalize) and async::CompilePool (workers, waiters that run their own job,
// priorities, draining on destruction).
//
// Deterministic by construction (STYLE.md point 9): a job that must stay busy
// blocks on a Gate the test opens, and the test waits for it to have started
// before it goes on, so what runs where and in which order never depends on
// timing. No test asserts a duration. The one deadline here (Gate::wait_entered)
// turns a deadlock into a failed check instead of a hung binary.
#include <doctest/doctest.h>

#include "tests/gate.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "async/compile_pool.hpp"
#include "async/job.hpp"
#include "compiler/compile.hpp"
#include "kiln/error.hpp"

namespace {

using kiln::async::CompilePool;
using kiln::async::Job;

using kiln::testing::Gate;
using kiln::testing::OpenOnExit;

/// Something to return from a finalizer: jobs only pass the pointer along.
const kiln::CompiledKernel kKernelA{};

std::shared_ptr<Job> make_job(std::string key, Job::CompileFn compile, Job::FinalizeFn finalize = nullptr,
                              bool ignore_errors = false, CompilePool *pool = nullptr) {
  if (!finalize)
    finalize = [](std::shared_ptr<void>, std::exception_ptr) -> const kiln::CompiledKernel * { return &kKernelA; };
  auto job = std::make_shared<Job>(kiln::async::JobKey{nullptr, std::move(key)}, std::move(compile),
                                   std::move(finalize), ignore_errors);
  job->self = job;
  job->pool = pool;
  return job;
}

std::shared_ptr<void> nothing() { return std::make_shared<int>(0); }

using kiln::testing::Order;

} // namespace

TEST_CASE("compile pool: a queued job is claimed by exactly one caller") {
  auto job = make_job("k", nothing);
  CHECK(job->key() == kiln::async::JobKey{nullptr, "k"});
  CHECK(job->state() == Job::State::Queued);
  CHECK_FALSE(job->done());
  REQUIRE(job->claim());
  CHECK(job->state() == Job::State::Running);
  CHECK_FALSE(job->claim());
  job->execute();
  CHECK(job->done());
  CHECK_FALSE(job->claim());
}

TEST_CASE("compile pool: claims race, one of eight threads wins") {
  for (int round = 0; round < 50; ++round) {
    auto job = make_job("k", nothing);
    std::atomic<int> wins{0};
    std::latch go(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        go.arrive_and_wait();
        if (job->claim())
          ++wins;
      });
    for (auto &t : threads)
      t.join();
    CHECK(wins == 1);
  }
}

TEST_CASE("compile pool: execute stores the result, calls on_done once and never throws") {
  int on_done_calls = 0;
  std::shared_ptr<Job> seen;
  auto value = std::make_shared<int>(42);
  std::shared_ptr<void> got;
  auto job = make_job(
      "k", [value] { return std::static_pointer_cast<void>(value); },
      [&](std::shared_ptr<void> r, std::exception_ptr e) -> const kiln::CompiledKernel * {
        got = std::move(r);
        CHECK_FALSE(e);
        return &kKernelA;
      });
  job->on_done = [&](const std::shared_ptr<Job> &j) {
    ++on_done_calls;
    seen = j;
  };
  REQUIRE(job->claim());
  job->execute();
  CHECK(on_done_calls == 1);
  CHECK(seen == job);
  CHECK_FALSE(job->error());
  CHECK_FALSE(job->finalized());

  bool ran_here = false;
  CHECK(job->finalize(&ran_here) == &kKernelA);
  CHECK(ran_here);
  CHECK(job->finalized());
  REQUIRE(got);
  CHECK(*std::static_pointer_cast<int>(got) == 42);

  // A second finalize returns the same kernel without running the finalizer.
  CHECK(job->finalize(&ran_here) == &kKernelA);
  CHECK_FALSE(ran_here);
}

TEST_CASE("compile pool: a compile error is kept and rethrown by every finalize") {
  std::exception_ptr finalizer_saw;
  int finalizer_calls = 0;
  auto job = make_job(
      "bad",
      []() -> std::shared_ptr<void> { throw kiln::CompileError("k.py", 3, 5, "no such name 'x'", "    y = x"); },
      [&](std::shared_ptr<void> r, std::exception_ptr e) -> const kiln::CompiledKernel * {
        ++finalizer_calls;
        CHECK_FALSE(r);
        finalizer_saw = e;
        return nullptr;
      });
  REQUIRE(job->claim());
  CHECK_NOTHROW(job->execute());
  CHECK(job->done());
  REQUIRE(job->error());
  bool ran_here = false;
  CHECK_THROWS_AS(job->finalize(&ran_here), kiln::CompileError);
  CHECK(ran_here);
  CHECK(finalizer_saw == job->error());
  try {
    job->finalize(&ran_here);
    FAIL("the second finalize did not rethrow");
  } catch (const kiln::CompileError &e) {
    CHECK(e.line() == 3);
    CHECK(e.message() == "no such name 'x'");
  }
  CHECK_FALSE(ran_here);
  CHECK(finalizer_calls == 1);
}

TEST_CASE("compile pool: with ignore_errors a failed job finalizes to null without throwing") {
  int finalizer_calls = 0;
  auto job = make_job(
      "bad", []() -> std::shared_ptr<void> { throw kiln::Error("boom"); },
      [&](std::shared_ptr<void>, std::exception_ptr e) -> const kiln::CompiledKernel * {
        ++finalizer_calls;
        CHECK(e);
        return nullptr;
      },
      /*ignore_errors=*/true);
  REQUIRE(job->claim());
  job->execute();
  CHECK(job->error());
  CHECK(job->finalize() == nullptr);
  CHECK(job->finalize() == nullptr);
  CHECK(finalizer_calls == 1);
}

TEST_CASE("compile pool: an exception from the finalizer itself is rethrown") {
  auto job = make_job("k", nothing, [](std::shared_ptr<void>, std::exception_ptr) -> const kiln::CompiledKernel * {
    throw kiln::RuntimeError("publish failed");
  });
  REQUIRE(job->claim());
  job->execute();
  CHECK_FALSE(job->error());
  CHECK_THROWS_WITH_AS(job->finalize(), "publish failed", kiln::RuntimeError);
  CHECK_THROWS_WITH_AS(job->finalize(), "publish failed", kiln::RuntimeError);
}

TEST_CASE("compile pool: finalize runs once under eight concurrent callers") {
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> calls{0};
    auto job = make_job("k", nothing, [&](std::shared_ptr<void>, std::exception_ptr) -> const kiln::CompiledKernel * {
      ++calls;
      return &kKernelA;
    });
    REQUIRE(job->claim());
    job->execute();
    std::atomic<int> ran_here_count{0};
    std::latch go(8);
    std::vector<const kiln::CompiledKernel *> got(8, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        go.arrive_and_wait();
        bool here = false;
        got[t] = job->finalize(&here);
        if (here)
          ++ran_here_count;
      });
    for (auto &t : threads)
      t.join();
    CHECK(calls == 1);
    CHECK(ran_here_count == 1);
    for (const auto *k : got)
      CHECK(k == &kKernelA);
  }
}

TEST_CASE("compile pool: wait on a job nobody ran runs it on the waiting thread") {
  CompilePool pool(1); // never given this job: only the waiter can run it
  std::thread::id ran_on;
  auto job = make_job("k", [&] {
    ran_on = std::this_thread::get_id();
    return nothing();
  });
  job->pool = &pool;
  job->wait(pool);
  CHECK(job->done());
  CHECK(ran_on == std::this_thread::get_id());
  job->wait(pool); // done: returns at once
}

TEST_CASE("compile pool: wait on a job another thread is running blocks until it is done") {
  CompilePool pool(1);
  Gate gate;
  auto job = make_job("k", [gate] {
    gate.pass();
    return nothing();
  });
  REQUIRE(job->claim()); // "another thread" has it
  std::thread runner([&] { job->execute(); });
  REQUIRE(gate.wait_entered());
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    job->wait(pool);
    CHECK(job->done()); // wait never returns before the job is done
    waited = true;
  });
  CHECK_FALSE(job->done());
  gate.open();
  waiter.join();
  runner.join();
  CHECK(waited);
}

TEST_CASE("compile pool: threads() reports the bound") {
  CHECK(CompilePool(3).threads() == 3);
  CHECK(CompilePool(0).threads() >= 1); // 0: all cores
}

TEST_CASE("compile pool: the workers run submitted jobs without anyone waiting") {
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    CompilePool pool(threads);
    std::latch all(6);
    std::vector<std::shared_ptr<Job>> jobs;
    for (int i = 0; i < 6; ++i) {
      jobs.push_back(make_job("j" + std::to_string(i), [&] {
        all.count_down();
        return nothing();
      }, nullptr, false, &pool));
      pool.submit(jobs.back());
    }
    all.wait(); // nobody waits on a job: a pool with no worker hangs here
    for (auto &j : jobs)
      j->wait(pool);
    for (auto &j : jobs)
      CHECK(j->done());
  }
}

TEST_CASE("compile pool: a waiter runs a still-queued job itself while the only worker is busy") {
  CompilePool pool(1);
  OpenOnExit blocker;
  Gate gate = blocker.gate;
  auto first = make_job("first", [gate] {
    gate.pass();
    return nothing();
  }, nullptr, false, &pool);
  pool.submit(first);
  REQUIRE_MESSAGE(gate.wait_entered(), "the pool's worker never started the first job");

  std::thread::id ran_on;
  auto second = make_job("second", [&] {
    ran_on = std::this_thread::get_id();
    return nothing();
  }, nullptr, false, &pool);
  pool.submit(second);
  second->wait(pool); // the worker is stuck in `first`: this thread runs `second`
  CHECK(second->done());
  CHECK(ran_on == std::this_thread::get_id());
  CHECK_FALSE(first->done());
  CHECK(second->finalize() == &kKernelA);

  gate.open();
  first->wait(pool);
  CHECK(first->done());
}

TEST_CASE("compile pool: prioritize moves a queued job ahead of the others") {
  CompilePool pool(1);
  OpenOnExit blocker;
  Gate gate = blocker.gate;
  Order order;
  auto first = make_job("first", [gate, &order] {
    gate.pass();
    order.add("first");
    return nothing();
  }, nullptr, false, &pool);
  pool.submit(first);
  REQUIRE_MESSAGE(gate.wait_entered(), "the pool's worker never started the first job");

  // Queued behind `first`, in this order; nobody waits on them, so only the
  // worker runs them, one at a time.
  std::latch rest(4);
  std::vector<std::shared_ptr<Job>> queued;
  for (const char *key : {"b", "c", "d", "e"}) {
    queued.push_back(make_job(key, [&order, &rest, k = std::string(key)] {
      order.add(k);
      rest.count_down();
      return nothing();
    }, nullptr, false, &pool));
    pool.submit(queued.back());
  }
  pool.prioritize(queued[2]); // d
  pool.prioritize(queued[3]); // e, behind d among the urgent ones
  pool.prioritize(first);     // running, not queued: no effect
  gate.open();
  rest.wait();
  CHECK(order.keys == std::vector<std::string>{"first", "d", "e", "b", "c"});
}

TEST_CASE("compile pool: destruction waits for running and queued jobs") {
  std::vector<std::shared_ptr<Job>> jobs;
  std::atomic<int> ran{0};
  std::thread opener;
  {
    CompilePool pool(1);
    Gate gate;
    jobs.push_back(make_job("running", [gate, &ran] {
      gate.pass();
      ++ran;
      return nothing();
    }, nullptr, false, &pool));
    pool.submit(jobs.back());
    REQUIRE_MESSAGE(gate.wait_entered(), "the pool's worker never started the first job");
    for (int i = 0; i < 5; ++i) {
      jobs.push_back(make_job("queued" + std::to_string(i), [&ran] {
        ++ran;
        return nothing();
      }, nullptr, false, &pool));
      pool.submit(jobs.back());
    }
    // Opened from another thread while this one is (or is about to be) in
    // the destructor.
    opener = std::thread([gate] { gate.open(); });
  }
  opener.join();
  CHECK(ran == 6);
  for (auto &j : jobs)
    CHECK(j->done());
}

// ---- the pool's threads and the host's TBB settings (issue 13) ----

TEST_CASE("compile pool: its stage nodes are the compiler's stages") {
  // One list, in compiler/: the pool builds its graph from it rather than
  // from a count of its own.
  REQUIRE(CompilePool::stage_names().size() == kiln::compiler::kStageNames.size());
  for (std::size_t i = 0; i < kiln::compiler::kStageNames.size(); ++i)
    CHECK(CompilePool::stage_names()[i] == kiln::compiler::kStageNames[i]);
  CHECK(Job::kMaxStages == kiln::compiler::kStageNames.size());
  CHECK(kiln::compiler::Compilation::kStages == int(kiln::compiler::kStageNames.size()));
  // Each stage of a job runs in its own node, in order, then the result.
  CompilePool pool(2);
  std::vector<std::string> ran;
  std::mutex m;
  std::vector<Job::StageFn> stages;
  for (std::string_view name : CompilePool::stage_names())
    stages.push_back([&, name] {
      std::lock_guard l(m);
      ran.emplace_back(name);
    });
  auto job = std::make_shared<Job>(
      kiln::async::JobKey{nullptr, "staged"}, std::move(stages), nothing,
      [](std::shared_ptr<void>, std::exception_ptr) -> const kiln::CompiledKernel * {
        return &kKernelA;
      },
      false);
  job->self = job;
  job->pool = &pool;
  pool.submit(job);
  job->wait(pool);
  CHECK(job->finalize() == &kKernelA);
  CHECK(ran == std::vector<std::string>{"frontend", "optimize", "codegen"});
}

TEST_CASE("compile pool: a pool leaves the host program's TBB parallelism limit alone") {
  using tbb::global_control;
  const std::size_t before = global_control::active_value(global_control::max_allowed_parallelism);
  {
    CompilePool pool(5); // was: a global_control of 6 while the pool lived
    CHECK(global_control::active_value(global_control::max_allowed_parallelism) == before);
  }
  // A host that asked for more parallelism than cores keeps it while a
  // 1-thread pool lives (was: capped at 2, the smallest live value wins).
  global_control host(global_control::max_allowed_parallelism, 8);
  CHECK(global_control::active_value(global_control::max_allowed_parallelism) == 8);
  CompilePool pool(1);
  CHECK(global_control::active_value(global_control::max_allowed_parallelism) == 8);
  // ... and its parallel_for (as the CPU backend's grid) runs 4 at once in a
  // 4-slot arena, which it could not with 2 allowed.
  std::atomic<int> present{0}, most{0};
  tbb::task_arena four(4);
  four.execute([&] {
    tbb::parallel_for(0, 4, 1, [&](int) {
      const int now = ++present;
      int m = most.load();
      while (now > m && !most.compare_exchange_weak(m, now)) {
      }
      // Stay until all four are here, or a deadline passes (then most < 4).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (most.load() < 4 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    });
  });
  CHECK(most.load() == 4);
}

TEST_CASE("compile pool: a 2-thread pool runs two jobs at once on any number of cores") {
  // oneTBB gives an arena at most cores - 1 workers unless a global_control
  // says otherwise; the pool's own threads do not depend on it. Two jobs
  // that each wait for the other to start finish only if both run at once.
  for (int round = 0; round < 20; ++round) {
    CompilePool pool(2);
    std::latch both(2);
    std::vector<std::shared_ptr<Job>> jobs;
    for (int i = 0; i < 2; ++i) {
      jobs.push_back(make_job(
          "pair" + std::to_string(i),
          [&both] {
            both.arrive_and_wait();
            return nothing();
          },
          nullptr, false, &pool));
      pool.submit(jobs.back());
    }
    // Not Job::wait: that would run a queued job here, on a third thread.
    for (auto &j : jobs) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!j->done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      REQUIRE_MESSAGE(j->done(),
                      "round " << round << ": the pool ran one job at a time (a thread short?)");
    }
  }
}
