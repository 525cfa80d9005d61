# KILN_SANITIZE=address: ASan + UBSan; KILN_SANITIZE=thread: TSan.
if(KILN_SANITIZE STREQUAL "address")
  # Not vptr: oneTBB's flow graph finalizes its tasks through a base-class
  # pointer after they ran (_flow_graph_impl.h), which the vptr check
  # reports though it is TBB's own idiom, in headers we cannot change.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined -fno-sanitize=vptr)
elseif(KILN_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT KILN_SANITIZE STREQUAL "")
  message(FATAL_ERROR "KILN_SANITIZE must be address, thread or empty, not '${KILN_SANITIZE}'")
endif()

# The system oneTBB is not built with TSan: every program the suite runs
# (test binaries, cache_child, the kiln command, the examples) carries the
# suppressions of tests/tsan_suppressions.cpp in a TSan build. A source of
# the program, not a library member: libtsan looks the hook up in the
# executable, and a static library's object would never be pulled in.
function(kiln_tsan_suppressions target)
  if(KILN_SANITIZE STREQUAL "thread")
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/tsan_suppressions.cpp)
  endif()
endfunction()
