#include "kiln/version.hpp"

#include "kiln_build_id.hpp" // generated into the build folder by cmake/KilnBuildId.cmake

namespace kiln {

const VersionInfo &version_info() {
  static const VersionInfo info{KILN_VERSION_STRING, KILN_BUILD_ID, KILN_GIT_DESCRIBE,
                                KILN_LLVM_VERSION};
  return info;
}

} // namespace kiln
