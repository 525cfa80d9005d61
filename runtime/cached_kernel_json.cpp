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

frontend::ConstValue const_from_json(const JsonObject &j) {
  const std::string_view kind = j.string_view("kind");
  if (kind == "none")
    return frontend::ConstValue::none();
  if (kind == "int")
    return frontend::ConstValue::of_int(j.int64("value"));
  if (kind == "float")
    return frontend::ConstValue::of_float(std::bit_cast<double>(j.uint64("bits")));
  if (kind == "bool")
    return frontend::ConstValue::of_bool(j.boolean("value"));
  if (kind == "str")
    return frontend::ConstValue::of_str(j.string("value"));
  if (kind == "dtype")
    return frontend::ConstValue::of_dtype(static_cast<DType>(j.integer<int>("value")));
  throw std::runtime_error("unknown constant kind " + std::string(kind));
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

CachedKernel from_metadata_json(const JsonObject &meta) {
  CachedKernel out;
  CompiledKernel &k = out.kernel;
  k.name = meta.string("kernel");
  k.target = meta.string("target");
  k.binary_kind = meta.string("binary_kind");
  k.entry = meta.string("entry");
  k.specialization = meta.string("specialization");
  k.hash = meta.has("hash") ? meta.string("hash") : std::string();
  k.shared_bytes = meta.integer<uint32_t>("shared_bytes");
  // A CPU kernel with big blocks writes past its stack without its scratch.
  k.scratch_bytes = meta.uint64("scratch_bytes");
  k.registers = meta.integer<int>("registers");
  k.spill_bytes = meta.integer<int>("spill_bytes");
  const JsonObject o = meta.object("options");
  k.options.num_warps = o.integer<int>("num_warps");
  k.options.num_stages = o.integer<int>("num_stages");
  k.options.num_ctas = o.integer<int>("num_ctas");
  k.options.enable_fp_fusion = o.boolean("enable_fp_fusion");
  k.options.debug = o.boolean("debug");
  for (const JsonValue &v : meta.array("params")) {
    const JsonObject p(v, "a parameter");
    k.params.push_back(
        {p.string("name"), static_cast<DType>(p.integer<int>("dtype")), p.boolean("is_pointer")});
  }
  for (const JsonValue &v : meta.array("times")) {
    const JsonObject t(v, "a stage time");
    k.times.push_back({t.string("stage"), t.number("ms")});
  }
  for (const JsonValue &v : meta.array("globals")) {
    const JsonObject g(v, "a global");
    out.globals.push_back(
        {g.string("module"), g.string("name"), const_from_json(g.object("value"))});
  }
  return out;
}

} // namespace kiln::runtime
