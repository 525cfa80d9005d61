#include "runtime/cached_kernel_json.hpp"

#include <bit>
#include <stdexcept>

namespace kiln::runtime {

using nlohmann::json;

namespace {

json const_to_json(const frontend::ConstValue &v) {
  using K = frontend::ConstValue::Kind;
  switch (v.kind) {
  case K::None:
    return {{"kind", "none"}};
  case K::Int:
    return {{"kind", "int"}, {"value", v.i}};
  case K::Float:
    return {{"kind", "float"}, {"bits", std::bit_cast<uint64_t>(v.f)}}; // exact
  case K::Bool:
    return {{"kind", "bool"}, {"value", v.b}};
  case K::Str:
    return {{"kind", "str"}, {"value", v.s}};
  case K::DType:
    return {{"kind", "dtype"}, {"value", static_cast<int>(v.dtype)}};
  default:
    return nullptr; // a function: not storable
  }
}

frontend::ConstValue const_from_json(const json &j) {
  const std::string kind = j.at("kind");
  if (kind == "none")
    return frontend::ConstValue::none();
  if (kind == "int")
    return frontend::ConstValue::of_int(j.at("value").get<int64_t>());
  if (kind == "float")
    return frontend::ConstValue::of_float(std::bit_cast<double>(j.at("bits").get<uint64_t>()));
  if (kind == "bool")
    return frontend::ConstValue::of_bool(j.at("value").get<bool>());
  if (kind == "str")
    return frontend::ConstValue::of_str(j.at("value").get<std::string>());
  if (kind == "dtype")
    return frontend::ConstValue::of_dtype(static_cast<DType>(j.at("value").get<int>()));
  throw std::runtime_error("unknown constant kind " + kind);
}

} // namespace

std::optional<json> metadata_json(const CachedKernel &c) {
  const CompiledKernel &k = c.kernel;
  json globals = json::array();
  for (const StoredGlobal &g : c.globals) {
    json v = const_to_json(g.value);
    if (v.is_null())
      return std::nullopt;
    globals.push_back({{"module", g.module_path}, {"name", g.name}, {"value", std::move(v)}});
  }
  json params = json::array();
  for (const LaunchParam &p : k.params)
    params.push_back(
        {{"name", p.name}, {"dtype", static_cast<int>(p.dtype)}, {"is_pointer", p.is_pointer}});
  json times = json::array();
  for (const StageTime &t : k.times)
    times.push_back({{"stage", t.stage}, {"ms", t.ms}});
  return json{
      {"kernel", k.name},
      {"target", k.target},
      {"binary_kind", k.binary_kind},
      {"entry", k.entry},
      {"specialization", k.specialization},
      {"hash", k.hash},
      {"options",
       {{"num_warps", k.options.num_warps},
        {"num_stages", k.options.num_stages},
        {"num_ctas", k.options.num_ctas},
        {"enable_fp_fusion", k.options.enable_fp_fusion},
        {"debug", k.options.debug}}},
      {"shared_bytes", k.shared_bytes},
      {"scratch_bytes", k.scratch_bytes},
      {"registers", k.registers},
      {"spill_bytes", k.spill_bytes},
      {"params", std::move(params)},
      {"times", std::move(times)},
      {"globals", std::move(globals)},
  };
}

CachedKernel from_metadata_json(const json &meta) {
  CachedKernel out;
  CompiledKernel &k = out.kernel;
  k.name = meta.at("kernel");
  k.target = meta.at("target");
  k.binary_kind = meta.at("binary_kind");
  k.entry = meta.at("entry");
  k.specialization = meta.at("specialization");
  k.hash = meta.value("hash", "");
  k.shared_bytes = meta.at("shared_bytes");
  // A CPU kernel with big blocks writes past its stack without its scratch.
  k.scratch_bytes = meta.at("scratch_bytes");
  k.registers = meta.at("registers");
  k.spill_bytes = meta.at("spill_bytes");
  const json &o = meta.at("options");
  k.options.num_warps = o.at("num_warps");
  k.options.num_stages = o.at("num_stages");
  k.options.num_ctas = o.at("num_ctas");
  k.options.enable_fp_fusion = o.at("enable_fp_fusion");
  k.options.debug = o.at("debug");
  for (const json &p : meta.at("params"))
    k.params.push_back(
        {p.at("name"), static_cast<DType>(p.at("dtype").get<int>()), p.at("is_pointer")});
  for (const json &t : meta.at("times"))
    k.times.push_back({t.at("stage"), t.at("ms")});
  for (const json &g : meta.at("globals"))
    out.globals.push_back({g.at("module"), g.at("name"), const_from_json(g.at("value"))});
  return out;
}

} // namespace kiln::runtime
