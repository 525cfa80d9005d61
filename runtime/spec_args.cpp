#include "runtime/spec_args.hpp"

#include <algorithm>
#include <charconv>

#include "compiler/support/closest_name.hpp"
#include "kiln/error.hpp"
#include "kiln/module.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/module_state.hpp"

namespace kiln::runtime {

namespace {

// Representative values: each specializes to exactly the spec asked for.
constexpr int64_t kDivisible = 16, kPlain = 17;
constexpr int64_t kI64 = (int64_t{1} << 33) + 1, kI64Divisible = int64_t{1} << 36;
constexpr uint64_t kU64 = ~uint64_t{0} - 1, kU64Divisible = ~uint64_t{0} - 15;
// Mock tensor addresses: never dereferenced, only checked for alignment.
void *const kAligned = reinterpret_cast<void *>(uintptr_t{1} << 12);
void *const kUnaligned = reinterpret_cast<void *>((uintptr_t{1} << 12) + 4);

Arg runtime_arg(const std::string &param, const std::string &spec) {
  std::string type = spec;
  bool divisible = false;
  if (type.size() > 2 && type.compare(type.size() - 2, 2, ":D") == 0) {
    divisible = true;
    type.resize(type.size() - 2);
  }
  auto bad = [&]() -> Arg {
    throw ArgumentError("parameter '" + param + "': '" + spec +
                        "' is not a specialization; use *fp32, *fp16:D, i32, i32:D, i64, u64, fp32 or u1");
  };
  if (!type.empty() && type[0] == '*') {
    std::string elem = type.substr(1);
    if (!elem.empty() && elem[0] == 'k')
      elem = elem.substr(1);
    auto dt = parse_dtype(elem);
    if (!dt)
      return bad();
    return Arg(Tensor(divisible ? kAligned : kUnaligned, *dt));
  }
  if (type == "i32")
    return Arg(divisible ? kDivisible : kPlain);
  if (type == "i64")
    return Arg(divisible ? kI64Divisible : kI64);
  if (type == "u64")
    return Arg(divisible ? kU64Divisible : kU64);
  // The other scalar types come only from annotations (`x: tl.float64`,
  // `n: tl.uint32`), which set the type: any value of the kind will do.
  if (const auto dt = parse_dtype(type); dt && is_int(*dt) && *dt != DType::i1)
    return Arg(divisible ? kDivisible : kPlain);
  if (divisible)
    return bad();
  if (type == "fp32")
    return Arg(1.5);
  if (type == "u1" || type == "i1")
    return Arg(true);
  if (const auto dt = parse_dtype(type); dt && is_float(*dt))
    return Arg(1.5);
  return bad();
}

/// "tensordesc<fp16[64, 64]>" or "tensordesc<fp32[32, 32],nan>", then the
/// `D` attribute of its shape dims and strides but the last as
/// ParamSpec::str() writes it (":D" for all of them, ":D_D" one by one,
/// none for none): a descriptor over a mock aligned tensor whose shape and
/// strides have those attributes; nullopt when `spec` is no descriptor.
std::optional<Arg> descriptor_arg(const std::string &param, const std::string &spec,
                                  SpecStorage &storage) {
  constexpr std::string_view head = "tensordesc<";
  if (spec.rfind(head, 0) != 0)
    return std::nullopt;
  auto bad = [&]() -> Arg {
    throw ArgumentError("parameter '" + param + "': '" + spec +
                        "' is not a descriptor type; write tensordesc<fp16[64, 64]> (or "
                        "tensordesc<fp32[32, 32],nan> for NaN padding), then :D if its shape "
                        "and strides are multiples of 16");
  };
  const size_t lb = spec.find('['), rb = spec.find(']'), close = spec.find('>');
  if (lb == std::string::npos || rb == std::string::npos || close == std::string::npos || rb < lb ||
      close < rb)
    return bad();
  const std::optional<DType> dt = parse_dtype(spec.substr(head.size(), lb - head.size()));
  std::string rest = spec.substr(rb + 1, close - rb - 1);
  std::erase(rest, ' ');
  if (!dt || (rest != "" && rest != ",nan"))
    return bad();
  std::vector<int64_t> block;
  for (size_t at = lb + 1; at < rb;) {
    while (at < rb && spec[at] == ' ')
      ++at;
    int64_t d = 0;
    const auto [end, ec] = std::from_chars(spec.data() + at, spec.data() + rb, d);
    if (ec != std::errc())
      return bad();
    block.push_back(d);
    at = static_cast<size_t>(end - spec.data());
    while (at < rb && spec[at] == ' ')
      ++at;
    if (at < rb && spec[at++] != ',')
      return bad();
  }
  const size_t n = block.size();
  // One letter per shape dim and stride but the last, D or _.
  std::string flags(2 * n - 1, '_');
  const std::string attrs = spec.substr(close + 1);
  if (attrs == ":D")
    flags.assign(2 * n - 1, 'D');
  else if (!attrs.empty() && (attrs.size() != 2 * n || attrs[0] != ':' ||
                              attrs.find_first_not_of("D_", 1) != std::string::npos))
    throw ArgumentError("parameter '" + param + "': '" + spec + "' ends in '" + attrs +
                        "'; after the descriptor type write :D (its shape and strides are "
                        "multiples of 16) or a D or _ for each of its " +
                        std::to_string(n) + " shape dims and " + std::to_string(n - 1) +
                        " strides but the last, like :D_D");
  else if (!attrs.empty())
    flags = attrs.substr(1);
  // 64 is a multiple of 16 and 65 not; a stride is a multiple of 16 bytes
  // either way, as a TensorDescriptor's must be.
  const int64_t esize = static_cast<int64_t>(dtype_size(*dt));
  std::vector<int64_t> shape(n), strides(n, 1);
  for (size_t d = 0; d < n; ++d)
    shape[d] = flags[d] == 'D' ? 64 : 65;
  for (size_t d = 0; d + 1 < n; ++d) {
    strides[d] = flags[n + d] == 'D' ? 64 : std::max<int64_t>(16 / esize, 1) * 65;
    if (flags[n + d] != 'D' && strides[d] % 16 == 0)
      throw ArgumentError("parameter '" + param + "': '" + spec + "': a stride of " +
                          std::string(dtype_name(*dt)) +
                          " elements is a multiple of 16 bytes, so always of 16 elements; "
                          "write D for it");
  }
  const TensorDescriptor &desc = storage.descriptors.emplace_back(
      Tensor(kAligned, *dt), shape, strides, block,
      rest.empty() ? TensorDescriptor::Padding::zero : TensorDescriptor::Padding::nan);
  return Arg(desc);
}

} // namespace

namespace {

/// The argument one spec gives parameter `param` (or an element of it).
Arg spec_arg(const JitFunction &fn, const std::string &param, bool constexpr_param,
             const nlohmann::json &spec, SpecStorage &storage) {
  if (spec.is_string()) {
    const std::string s = spec.get<std::string>();
    // A quoted constexpr ("'gelu'") is that string even where a jit function
    // has the name: attorch picks its activation by name (act_func="gelu")
    // and defines a jit function gelu beside it.
    if (constexpr_param && s.size() >= 2 && (s.front() == '"' || s.front() == '\'') &&
        s.back() == s.front())
      return Arg(storage.strings.emplace_back(s.substr(1, s.size() - 2)).c_str());
    // A constexpr naming a jit function of the same module (higher-order kernels).
    if (auto callee = fn.module().function(s))
      return Arg(storage.functions.emplace_back(std::move(callee)));
    if (std::optional<DType> t = parse_language_dtype(s))
      return Arg(*t);
    if (std::optional<Arg> d = descriptor_arg(param, s, storage))
      return *d;
    // A constexpr that names no function is a string constexpr (`"ACT": "relu"`).
    if (constexpr_param)
      return Arg(storage.strings.emplace_back(s).c_str());
    return runtime_arg(param, s);
  }
  if (spec.is_boolean())
    return Arg(spec.get<bool>());
  if (spec.is_number_integer())
    return Arg(spec.get<int64_t>());
  if (spec.is_number_float())
    return Arg(spec.get<double>());
  if (spec.is_null())
    return Arg(nullptr);
  if (spec.is_array()) {
    std::vector<Arg> &elems = storage.tuples.emplace_back();
    elems.reserve(spec.size());
    for (const nlohmann::json &e : spec)
      elems.push_back(spec_arg(fn, param, constexpr_param, e, storage));
    return Arg::tuple(elems);
  }
  throw ArgumentError(
      "parameter '" + param +
      "': a specialization is a string, a number, a bool, null or an array (a tuple)");
}

} // namespace

std::vector<Arg> args_from_specs(const JitFunction &fn, const nlohmann::json &specs,
                                 SpecStorage &storage) {
  if (!specs.is_object())
    throw ArgumentError("\"args\" must be an object from parameter name to specialization");
  std::vector<Arg> out;
  for (const auto &[name, spec] : specs.items()) {
    const KernelParam *p = nullptr;
    for (const KernelParam &q : fn.params())
      if (q.name == name)
        p = &q;
    if (!p) {
      std::vector<std::string_view> names;
      for (const KernelParam &q : fn.params())
        names.push_back(q.name);
      throw ArgumentError(fn.name() + " has no parameter '" + name + "'" +
                          did_you_mean(name, names));
    }
    const char *key = storage.strings.emplace_back(name).c_str();
    out.push_back(arg(key, spec_arg(fn, name, p->is_constexpr, spec, storage)));
  }
  return out;
}

void append_option_args(const nlohmann::json &options, SpecStorage &storage,
                        std::vector<Arg> &out) {
  if (options.is_null())
    return;
  if (!options.is_object())
    throw ArgumentError("\"options\" must be an object such as {\"num_warps\": 4}");
  for (const auto &[name, v] : options.items()) {
    const char *key = storage.strings.emplace_back(name).c_str();
    if (v.is_boolean())
      out.push_back(arg(key, v.get<bool>()));
    else if (v.is_number_integer())
      out.push_back(arg(key, v.get<int64_t>()));
    else
      throw ArgumentError("option '" + name + "' must be an integer or a bool");
  }
}

nlohmann::json spec_json(const compiler::ParamSpec &s) {
  if (s.is_descriptor)
    return s.str();
  if (s.is_tuple) {
    nlohmann::json elems = nlohmann::json::array();
    for (const compiler::ParamSpec &e : s.elems)
      elems.push_back(spec_json(e));
    return elems;
  }
  if (s.is_constexpr) {
    const frontend::ConstValue &v = s.value;
    switch (v.kind) {
    case frontend::ConstValue::Kind::Int: return v.i;
    case frontend::ConstValue::Kind::Float: return v.f;
    case frontend::ConstValue::Kind::Bool: return v.b;
    case frontend::ConstValue::Kind::Function: return v.fn->name;
    case frontend::ConstValue::Kind::Str: return v.s;
    case frontend::ConstValue::Kind::DType: return "tl." + std::string(dtype_language_name(v.dtype));
    case frontend::ConstValue::Kind::None: return nullptr;
    }
  }
  std::string t = s.type_str();
  if (t == "i1")
    t = "u1";
  return s.divisible16 ? t + ":D" : t;
}

nlohmann::json specialization_data(const JitFunction &fn, const std::vector<compiler::ParamSpec> &specs,
                                   const Options &o, const std::string &key) {
  nlohmann::json args = nlohmann::json::object();
  for (unsigned i = 0; i < specs.size(); ++i)
    args[fn.params()[i].name] = spec_json(specs[i]);
  return {{"file", fn.module().path()},
          {"kernel", fn.name()},
          {"args", args},
          {"options",
           {{"num_warps", o.num_warps},
            {"num_stages", o.num_stages},
            {"num_ctas", o.num_ctas},
            {"enable_fp_fusion", o.enable_fp_fusion},
            {"debug", o.debug}}},
          {"key", key}};
}

} // namespace kiln::runtime
