# Every third-party dependency, found once here (Debian 12 packages; see
# scripts/bootstrap). LLVM is linked statically from its component libraries
# so the binaries run where no LLVM is installed.
find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
find_package(TBB REQUIRED CONFIG)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED CONFIG)
# RapidJSON 1.1's CMake config sets only variables; the header is enough.
find_path(KILN_RAPIDJSON_INCLUDE rapidjson/document.h REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(doctest CONFIG)

# Debian's LLVMSupport names shared zlib/zstd and libz3; link the static
# archives instead so nothing of LLVM's is needed at run time.
find_library(KILN_LIBZ_STATIC NAMES libz.a REQUIRED)
find_library(KILN_LIBZSTD_STATIC NAMES libzstd.a REQUIRED)
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "rt;dl;m;${KILN_LIBZ_STATIC};${KILN_LIBZSTD_STATIC};LLVMDemangle")

llvm_map_components_to_libnames(KILN_LLVM_LIBS
  core support asmparser passes ipo linker bitreader analysis transformutils vectorize instcombine scalaropts
  target mc object orcjit executionengine jitlink
  nvptxcodegen nvptxdesc nvptxinfo
  x86codegen x86asmparser x86desc x86info)

# LLVM's headers and definitions, for kiln's own sources only: kiln_compiler
# links it as $<BUILD_INTERFACE:...> so no LLVM include path or -D reaches a
# user of kiln; the LLVM libraries themselves are linked on their own
# (KILN_LLVM_LIBS), link-only.
add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(KILN_LLVM_DEFS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${KILN_LLVM_DEFS})
target_link_options(kiln_llvm INTERFACE -Wl,--as-needed)
