// A CachedKernel's metadata as JSON (everything but the binary and the
// stage texts), shared by the disk and the remote cache so both write one
// format.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/cache_level.hpp"
#include "runtime/json_document.hpp"

namespace kiln::runtime {

/// nullopt when the entry cannot be written down faithfully (a global whose
/// value is a function): such an entry is not cached.
std::optional<nlohmann::json> metadata_json(const CachedKernel &k);

/// The entry `meta` describes, without its binary and stages. Throws
/// std::runtime_error for malformed metadata.
CachedKernel from_metadata_json(const JsonObject &meta);

} // namespace kiln::runtime
