# What users link: kiln::kiln. By default an interface over the three static
# layers (runtime -> async -> compiler, LLVM linked in statically); with
# -DKILN_SHARED=ON a libkiln.so holding all of them and LLVM, so programs
# that link it stay small and start without LLVM installed.
if(KILN_SHARED)
  if(NOT CMAKE_POSITION_INDEPENDENT_CODE)
    message(FATAL_ERROR "KILN_SHARED=ON needs position-independent objects: configure a fresh build dir "
                        "with -DKILN_SHARED=ON (it sets CMAKE_POSITION_INDEPENDENT_CODE before the layers)")
  endif()
  # Every object of the three layers (the whole API, not only what the
  # library itself calls); the layers' archives after them add nothing but
  # their link interface (LLVM, oneTBB, OpenSSL, hiredis).
  add_library(kiln_kiln SHARED ${PROJECT_SOURCE_DIR}/runtime/shared_library.cpp
    $<TARGET_OBJECTS:kiln_runtime> $<TARGET_OBJECTS:kiln_async> $<TARGET_OBJECTS:kiln_compiler>
    $<TARGET_OBJECTS:kiln_compiler_llvm>)
  target_link_libraries(kiln_kiln PRIVATE kiln_runtime)
  target_include_directories(kiln_kiln PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(kiln_kiln PUBLIC cxx_std_20)
  # Only kiln's own symbols leave the library: LLVM's stay inside, so a
  # program with its own LLVM does not mix the two.
  target_link_options(kiln_kiln PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/kiln.map -Wl,--no-undefined)
  set_target_properties(kiln_kiln PROPERTIES OUTPUT_NAME kiln VERSION ${PROJECT_VERSION}
                                             SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
                                             LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/kiln.map)
else()
  add_library(kiln_kiln INTERFACE)
  target_link_libraries(kiln_kiln INTERFACE kiln_runtime)
endif()
set_target_properties(kiln_kiln PROPERTIES EXPORT_NAME kiln)
add_library(kiln::kiln ALIAS kiln_kiln)

# kiln's own programs (the command, tests, benchmarks) also read its private
# headers (runtime/, compiler/, the generated build id) and link the static
# layers whatever KILN_SHARED says. Never installed or exported.
add_library(kiln_internal INTERFACE)
target_include_directories(kiln_internal INTERFACE ${PROJECT_SOURCE_DIR})
if(KILN_CUDA_INCLUDE)
  target_include_directories(kiln_internal SYSTEM INTERFACE ${KILN_CUDA_INCLUDE})
  target_compile_definitions(kiln_internal INTERFACE KILN_HAVE_CUDA_H)
endif()
if(KILN_NVJITLINK_INCLUDE)
  target_include_directories(kiln_internal SYSTEM INTERFACE ${KILN_NVJITLINK_INCLUDE})
  target_compile_definitions(kiln_internal INTERFACE KILN_HAVE_NVJITLINK_H)
endif()
target_include_directories(kiln_internal SYSTEM INTERFACE ${KILN_RAPIDJSON_INCLUDE})
target_link_libraries(kiln_internal INTERFACE kiln_runtime nlohmann_json::nlohmann_json)
