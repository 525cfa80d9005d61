# Warnings as errors for kiln's own targets (not for third-party headers,
# which are included as SYSTEM).
add_library(kiln_warnings INTERFACE)
target_compile_options(kiln_warnings INTERFACE -Wall -Wextra -Werror -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports std::string concatenation at -O3 as overlapping or
  # oversized memcpy (GCC bugs 105329, 105651): false positives.
  target_compile_options(kiln_warnings INTERFACE -Wno-restrict -Wno-stringop-overflow -Wno-array-bounds)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT KILN_SANITIZE STREQUAL "")
  # Sanitizer instrumentation defeats GCC's flow analysis inside inlined LLVM
  # headers (APInt in an optional<ConstantRange>): false maybe-uninitialized.
  target_compile_options(kiln_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND KILN_SANITIZE STREQUAL "thread")
  # Boost.Asio's handlers use std::atomic_thread_fence, which TSan does not
  # model; GCC warns at every inlined use (-Wtsan). The fences are Asio's,
  # in its own synchronization, not kiln's.
  target_compile_options(kiln_warnings INTERFACE -Wno-tsan)
endif()
