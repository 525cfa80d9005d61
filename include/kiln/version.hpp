// kiln's version and build: what `kiln --version` prints and what every
// compile key names, so no cache hands a binary to another build of kiln.
#pragma once

#include <string>

namespace kiln {

struct VersionInfo {
  std::string version;      ///< the project version, "0.1.0"
  std::string build_id;     ///< a hash of the compiler's sources at build time
  std::string git_describe; ///< `git describe` at build time ("nogit" outside a checkout)
  std::string llvm_version; ///< "19.1.7"
};

/// Thread-safe; the same object for the whole process.
const VersionInfo &version_info();

} // namespace kiln
