#include "tools/kiln/npy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/error.hpp"

namespace kiln::cli {

// Element bytes are copied between the file and memory as they are: the file
// is little-endian ('<' or byte-order free), so the host must be too. Every
// machine kiln targets (x86-64 hosts, the CUDA devices' hosts) is.
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace {

constexpr std::array<char, 6> kMagic = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
constexpr std::string_view kSupported =
    "supported: '<f2' '<f4' '<f8', '<i1'..'<i8', '<u1'..'<u8', '|b1' (bool)";

// Appends rather than "'" + std::string(s): GCC 12 at -O3 reports a false
// -Wrestrict for a literal prepended to a temporary string (GCC PR 105651).
std::string in_quotes(std::string_view s) {
  std::string q(1, '\'');
  q.append(s);
  q += '\'';
  return q;
}

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw ArgumentError(path + ": " + what);
}

// ---- descr <-> DType ------------------------------------------------------

struct DescrEntry {
  char kind; ///< NumPy's type kind: 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  int size;  ///< bytes per element
  DType dtype;
};

// bf16 is absent on purpose: NumPy has no such type (see npy.hpp).
constexpr DescrEntry kDescrs[] = {
    {'f', 2, DType::f16}, {'f', 4, DType::f32}, {'f', 8, DType::f64}, {'i', 1, DType::i8},
    {'i', 2, DType::i16}, {'i', 4, DType::i32}, {'i', 8, DType::i64}, {'u', 1, DType::u8},
    {'u', 2, DType::u16}, {'u', 4, DType::u32}, {'u', 8, DType::u64}, {'b', 1, DType::i1},
};

/// The DType of a descr such as "<f4" or "|b1"; ArgumentError for the rest.
DType dtype_of_descr(const std::string &path, std::string_view descr) {
  std::string_view rest = descr;
  char order = '='; // a descr without a byte-order character is native
  if (!rest.empty() && std::string_view("<>|=").find(rest.front()) != std::string_view::npos) {
    order = rest.front();
    rest.remove_prefix(1);
  }
  if (rest == "O")
    fail(path, "object arrays (" + in_quotes(descr) +
                   ") are not supported: they hold Python objects, not numbers; save a "
                   "numeric array");
  int size = 0;
  const char kind = rest.empty() ? '\0' : rest.front();
  if (rest.size() == 2 && rest[1] >= '1' && rest[1] <= '8')
    size = rest[1] - '0';
  for (const DescrEntry &e : kDescrs) {
    if (e.kind != kind || e.size != size)
      continue;
    // One-byte types have no byte order, whatever character the file uses.
    if (order == '>' && size > 1)
      fail(path, "big-endian dtype " + in_quotes(descr) +
                     " is not supported; save with arr.astype(arr.dtype.newbyteorder('<'))");
    return e.dtype;
  }
  fail(path, "dtype " + in_quotes(descr) + " is not supported; " + std::string(kSupported));
}

// ---- the header: a Python dict literal ---------------------------------------

/// The values a .npy header holds. Lists and dicts are only recognized, to
/// name them in errors (a list descr is a structured dtype).
struct PyValue {
  enum class Kind : uint8_t { string, boolean, integer, none, tuple, list, dict };
  Kind kind = Kind::none;
  std::string text;              ///< string
  int64_t integer = 0;           ///< integer; boolean as 0/1
  std::vector<PyValue> items;    ///< tuple, list; dict: the values
  std::vector<std::string> keys; ///< dict: the keys, in the order of `items`
};

/// A recursive-descent reader of the literal subset numpy.lib.format writes
/// (and ast.literal_eval would accept): strings, ints (also Python 2's 3L),
/// True/False/None, tuples, lists, dicts. Throws SyntaxError.
class LiteralReader {
public:
  struct SyntaxError {
    std::string why;
  };

  explicit LiteralReader(std::string_view text) : s_(text) {}

  PyValue read_all() {
    PyValue v = value();
    skip_space();
    if (pos_ != s_.size())
      throw SyntaxError{"unexpected " + in_quotes(s_.substr(pos_, 12)) + " after the dict"};
    return v;
  }

private:
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c))
      throw SyntaxError{std::string("expected '") + c + "' at offset " + std::to_string(pos_)};
  }

  PyValue value() {
    skip_space();
    if (pos_ == s_.size())
      throw SyntaxError{"the header ends early"};
    const char c = s_[pos_];
    if (c == '\'' || c == '"')
      return string();
    if (c == '(' || c == '[')
      return sequence();
    if (c == '{')
      return dict();
    if (c == '-' || (c >= '0' && c <= '9'))
      return integer();
    return word();
  }

  PyValue string() {
    const char quote = s_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::string;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      // An escape keeps the next character as it is: enough for descrs
      // and keys, which never need \n or \x.
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size())
        ++pos_;
      v.text += s_[pos_++];
    }
    if (pos_ == s_.size())
      throw SyntaxError{"a string is not closed"};
    ++pos_;
    return v;
  }

  PyValue integer() {
    const std::size_t start = pos_;
    if (s_[pos_] == '-')
      ++pos_;
    uint64_t magnitude = 0;
    const std::size_t digits = pos_;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
      if (magnitude > (uint64_t{INT64_MAX} - 9) / 10)
        throw SyntaxError{"the integer at offset " + std::to_string(start) + " is too large"};
      magnitude = magnitude * 10 + static_cast<uint64_t>(s_[pos_] - '0');
    }
    if (pos_ == digits)
      throw SyntaxError{"expected a number at offset " + std::to_string(start)};
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l'))
      ++pos_; // Python 2 wrote long ints as 3L
    PyValue v;
    v.kind = PyValue::Kind::integer;
    v.integer =
        s_[start] == '-' ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  PyValue word() {
    PyValue v;
    for (auto [w, kind, value] : {std::tuple{"True", PyValue::Kind::boolean, 1},
                                  std::tuple{"False", PyValue::Kind::boolean, 0},
                                  std::tuple{"None", PyValue::Kind::none, 0}}) {
      if (s_.substr(pos_).starts_with(w)) {
        pos_ += std::strlen(w);
        v.kind = kind;
        v.integer = value;
        return v;
      }
    }
    throw SyntaxError{"unexpected " + in_quotes(s_.substr(pos_, 12))};
  }

  PyValue sequence() {
    const char close = s_[pos_] == '(' ? ')' : ']';
    ++pos_;
    PyValue v;
    v.kind = close == ')' ? PyValue::Kind::tuple : PyValue::Kind::list;
    while (!eat(close)) {
      v.items.push_back(value());
      if (!eat(',')) { // without a comma the sequence must end here
        expect(close);
        break;
      }
    }
    return v;
  }

  PyValue dict() {
    ++pos_;
    PyValue v;
    v.kind = PyValue::Kind::dict;
    while (!eat('}')) {
      skip_space();
      if (pos_ == s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
        throw SyntaxError{"a dict key is not a string at offset " + std::to_string(pos_)};
      v.keys.push_back(string().text);
      expect(':');
      v.items.push_back(value());
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    return v;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

/// The value of `key`; the last one when the header repeats it, as a
/// Python dict literal (and so NumPy) keeps the last.
const PyValue *find_key(const PyValue &dict, std::string_view key) {
  for (std::size_t i = dict.keys.size(); i-- > 0;)
    if (dict.keys[i] == key)
      return &dict.items[i];
  return nullptr;
}

struct Header {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::string descr;
};

Header interpret_header(const std::string &path, std::string_view text) {
  PyValue dict;
  try {
    dict = LiteralReader(text).read_all();
  } catch (const LiteralReader::SyntaxError &e) {
    fail(path, "the .npy header is not a Python dict literal (" + e.why +
                   "); it should look like {'descr': '<f4', 'fortran_order': False, "
                   "'shape': (3,)}");
  }
  if (dict.kind != PyValue::Kind::dict)
    fail(path, "the .npy header is not a dict; it should look like {'descr': '<f4', "
               "'fortran_order': False, 'shape': (3,)}");
  const PyValue *descr = find_key(dict, "descr");
  const PyValue *fortran = find_key(dict, "fortran_order");
  const PyValue *shape = find_key(dict, "shape");
  for (auto [v, name] :
       {std::pair{descr, "descr"}, std::pair{fortran, "fortran_order"}, std::pair{shape, "shape"}})
    if (v == nullptr)
      fail(path, std::string("the .npy header has no '") + name +
                     "' key; it needs 'descr', 'fortran_order' and 'shape'");

  Header h;
  if (descr->kind == PyValue::Kind::list)
    fail(path,
         "structured dtypes (a list of fields) are not supported; " + std::string(kSupported));
  if (descr->kind != PyValue::Kind::string)
    fail(path, "the header's 'descr' is not a string; " + std::string(kSupported));
  h.descr = descr->text;

  if (fortran->kind != PyValue::Kind::boolean)
    fail(path, "the header's 'fortran_order' is not True or False");
  if (fortran->integer != 0)
    fail(path, "Fortran-order arrays are not supported; save with np.ascontiguousarray");

  if (shape->kind != PyValue::Kind::tuple)
    fail(path, "the header's 'shape' is not a tuple of integers");
  for (const PyValue &d : shape->items) {
    if (d.kind != PyValue::Kind::integer || d.integer < 0)
      fail(path, "the header's 'shape' holds something other than non-negative integers");
    h.shape.push_back(d.integer);
  }
  h.dtype = dtype_of_descr(path, h.descr);
  return h;
}

// ---- file access ------------------------------------------------------------

std::string io_reason() {
  return errno ? std::strerror(errno) : "I/O error";
}

std::string shape_repr(const std::vector<int64_t> &shape) {
  // Python's tuple repr: (), (5,), (3, 4).
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

uint32_t little_endian(const unsigned char *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}

} // namespace

std::string npy_descr(DType t) {
  if (t == DType::bf16)
    return "<u2";
  if (is_fp8(t))
    return "|u1"; // NumPy has no fp8 either: the bytes
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == t)
      return std::string(1, e.size == 1 ? '|' : '<') + e.kind + std::to_string(e.size);
  return "?"; // unreachable: every DType but bf16 is in kDescrs
}

HostTensor read_npy(const std::string &path, std::optional<DType> read_as) {
  if (read_as && *read_as != DType::bf16 && !is_fp8(*read_as))
    throw ArgumentError(path + ": a .npy file can only be read as bf16 or an fp8 type (NumPy lacks them); "
                               "its other dtypes come from the file");
  errno = 0;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw RuntimeError(path + ": cannot open (" + io_reason() + ")");
  const auto file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);

  // Magic, version, and the 2-byte (1.0) or 4-byte (2.0, 3.0) header length.
  std::array<unsigned char, 12> prefix{};
  in.read(reinterpret_cast<char *>(prefix.data()),
          static_cast<std::streamsize>(std::min<uint64_t>(file_size, 12)));
  if (file_size < 8 || std::memcmp(prefix.data(), kMagic.data(), kMagic.size()) != 0)
    fail(path, "not a NumPy .npy file (it does not start with \\x93NUMPY); write it with "
               "numpy.save");
  const int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " is not supported; supported: 1.0, 2.0, 3.0");
  const int len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix_size = 8 + len_bytes;
  if (file_size < prefix_size)
    fail(path, "the file is truncated inside the .npy header");
  const uint64_t header_len = little_endian(prefix.data() + 8, len_bytes);
  if (file_size < prefix_size + header_len)
    fail(path, "the file is truncated: the .npy header says it is " + std::to_string(header_len) +
                   " bytes, the file has " + std::to_string(file_size - prefix_size) +
                   " after the prefix");

  std::string text(header_len, '\0');
  in.seekg(static_cast<std::streamoff>(prefix_size));
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  if (!in)
    throw RuntimeError(path + ": cannot read (" + io_reason() + ")");
  Header h = interpret_header(path, text);

  // Check the size against the file before allocating: a corrupt shape must
  // not turn into a huge allocation.
  const uint64_t available = file_size - prefix_size - header_len;
  uint64_t needed = dtype_size(h.dtype);
  for (int64_t d : h.shape)
    if (__builtin_mul_overflow(needed, static_cast<uint64_t>(d), &needed))
      fail(path, "the shape " + shape_repr(h.shape) + " is too large");
  if (needed > available)
    fail(path, "the file is truncated: shape " + shape_repr(h.shape) + " of " + in_quotes(h.descr) +
                   " needs " + std::to_string(needed) + " bytes of data, the file has " +
                   std::to_string(available));

  if (read_as == DType::bf16 && h.dtype != DType::u16)
    fail(path, "':bf16' reads a uint16 file of bfloat16 bit patterns, but this file holds " +
                   in_quotes(h.descr) + "; save the bits with arr.view(np.uint16)");
  if (read_as && is_fp8(*read_as) && h.dtype != DType::u8)
    fail(path, "':" + std::string(dtype_name(*read_as)) + "' reads a uint8 file of fp8 bit patterns, but this file holds " +
                   in_quotes(h.descr) + "; save the bits with arr.view(np.uint8)");

  HostTensor t = HostTensor::empty(h.dtype, std::move(h.shape));
  in.read(static_cast<char *>(t.data()), static_cast<std::streamsize>(t.nbytes()));
  if (!in)
    throw RuntimeError(path + ": cannot read (" + io_reason() + ")");
  if (read_as)
    t.reinterpret_as(*read_as);
  return t;
}

void write_npy(const std::string &path, const HostTensor &t) {
  std::string dict = "{'descr': '" + npy_descr(t.dtype()) +
                     "', 'fortran_order': False, 'shape': " + shape_repr(t.shape()) + ", }";
  // numpy.lib.format._wrap_header: pad with spaces so that the data starts
  // at a multiple of 64 bytes; the header ends in '\n'. Version 2.0 (4-byte
  // length) only when the 2-byte length would overflow.
  constexpr uint64_t kAlign = 64;
  int len_bytes = 2;
  uint64_t header_len = dict.size() + 1;
  uint64_t pad = kAlign - (8 + len_bytes + header_len) % kAlign;
  if (header_len + pad > 0xFFFF) {
    len_bytes = 4;
    pad = kAlign - (8 + len_bytes + header_len) % kAlign;
  }
  header_len += pad;

  std::string out(kMagic.begin(), kMagic.end());
  out += static_cast<char>(len_bytes == 2 ? 1 : 2);
  out += '\0';
  for (int i = 0; i < len_bytes; ++i)
    out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  out += dict;
  out.append(pad, ' ');
  out += '\n';

  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    throw RuntimeError(path + ": cannot write (" + io_reason() + ")");
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.write(static_cast<const char *>(t.data()), static_cast<std::streamsize>(t.nbytes()));
  f.close();
  if (!f)
    throw RuntimeError(path + ": cannot write (" + io_reason() + ")");
}

} // namespace kiln::cli
