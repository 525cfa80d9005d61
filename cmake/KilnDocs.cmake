# `cmake --build build --target docs`: the API reference from the `///`
# comments of include/kiln/ (Doxygen, HTML into build/docs/html). Without
# doxygen (Debian: apt-get install doxygen; scripts/bootstrap installs it as
# an optional package) the target says how to get it.
find_program(KILN_DOXYGEN doxygen)
if(KILN_DOXYGEN)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/Doxyfile.in ${PROJECT_BINARY_DIR}/Doxyfile @ONLY)
  add_custom_target(docs COMMAND ${KILN_DOXYGEN} ${PROJECT_BINARY_DIR}/Doxyfile
    WORKING_DIRECTORY ${PROJECT_BINARY_DIR} COMMENT "API reference into ${PROJECT_BINARY_DIR}/docs/html"
    VERBATIM)
else()
  add_custom_target(docs COMMAND ${CMAKE_COMMAND} -E echo
    "kiln docs: doxygen not found (Debian: apt-get install doxygen), then re-run cmake" VERBATIM)
endif()

# docs/build: the target as a user runs it, so a comment Doxygen warns about
# fails the suite (the Doxyfile turns warnings into a failed run). Skipped,
# visibly, where doxygen is not installed.
if(KILN_BUILD_TESTS)
  if(KILN_DOXYGEN)
    add_test(NAME docs/build COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target docs)
  else()
    add_test(NAME docs/build
             COMMAND sh -c "echo '[SKIP] no doxygen (Debian: apt-get install doxygen; scripts/bootstrap)'")
    set_tests_properties(docs/build PROPERTIES SKIP_REGULAR_EXPRESSION "\\[SKIP\\]")
  endif()
endif()
