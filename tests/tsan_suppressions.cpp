// ThreadSanitizer's suppressions for every program the suite runs: the test
// binaries, cache_child (the disk cache's other processes), the kiln command
// that the CLI tests re-execute and the examples (kiln_tsan_suppressions in
// cmake/KilnSanitizers.cmake adds this file to each in a TSan build).
#if defined(__SANITIZE_THREAD__)
// The system oneTBB is not built with ThreadSanitizer: its task pool hands
// task objects between threads with synchronization TSan cannot see, so
// code inlined from its headers (parallel_for's tree of tasks in the CPU
// driver) looks racy on recycled memory. kiln's own hand-offs through the
// compile pool are annotated (async/compile_pool.cpp) and not suppressed.
extern "C" const char *__tsan_default_suppressions() {
  return "race_top:oneapi/tbb/\n"
         // The same by function name, for builds without debug info (no
         // file paths): a flow-graph task built on one thread and run on
         // another is handed over through libtbb's task pool.
         "race_top:tbb::detail::\n"
         "race:tbb::detail::d1::start_for\n"
         "race:tbb::detail::d1::tree_node\n"
         "race:tbb::detail::d1::fold_tree\n"
         // tearing down the pool's flow graph after wait_for_all(), which
         // waits inside libtbb where TSan cannot see it
         "race:kiln::async::CompilePool::~CompilePool\n"
         // libtbb's own memset/memcmp/new on its arena and thread data (the
         // compile pool's threads joining its arena, parallel_for in the CPU
         // driver from several launching threads): every frame is inside the
         // uninstrumented library, whose atomics TSan cannot see. Only calls
         // made from libtbb are ignored; kiln's code and TBB's inlined
         // headers are still checked (the race_ lines above are narrower).
         "called_from_lib:libtbb.so.12\n";
}
#endif
