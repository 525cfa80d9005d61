// The `kiln` command's .npy reader and writer (tools/kiln/npy.hpp): round
// trips for every dtype and shape, files NumPy wrote (versions 1.0, 2.0,
// 3.0), and an ArgumentError naming the file for each malformed one.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "tests/temp_dir.hpp"
#include "tools/kiln/host_tensor.hpp"
#include "tools/kiln/npy.hpp"

namespace fs = std::filesystem;
using kiln::DType;
using kiln::cli::HostTensor;
using kiln::cli::read_npy;
using kiln::cli::write_npy;

namespace {

using kiln::test::TempDir;

void write_bytes(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// A .npy file as NumPy lays it out: the prefix of `version`, the dict
/// padded with spaces so that the data starts at a multiple of 64, '\n'.
std::string npy_file(int version, const std::string &dict, const std::string &data) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::size_t header = dict.size() + 1;
  header += 64 - (prefix + header) % 64;
  std::string s = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i)
    s += static_cast<char>((header >> (8 * i)) & 0xFF);
  s += dict + std::string(header - dict.size() - 1, ' ') + '\n';
  return s + data;
}

std::string npy_dict(const std::string &descr, const std::string &shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

/// what() of the ArgumentError that reading `path` throws ("" when none).
std::string read_error(const std::string &path) {
  try {
    read_npy(path);
  } catch (const kiln::ArgumentError &e) {
    return e.what();
  }
  return "";
}

HostTensor patterned(DType t, std::vector<int64_t> shape) {
  HostTensor h = HostTensor::empty(t, std::move(shape));
  auto bytes = h.bytes();
  for (std::size_t i = 0; i < bytes.size(); ++i)
    // i1 is NumPy's bool: keep its bytes 0 or 1.
    bytes[i] = static_cast<std::byte>(t == DType::i1 ? i % 2 : (i * 37 + 11) & 0xFF);
  return h;
}

bool same_bytes(const HostTensor &a, const HostTensor &b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

constexpr DType kAllDTypes[] = {DType::i1,   DType::i8,  DType::i16, DType::i32, DType::i64,
                                DType::u8,   DType::u16, DType::u32, DType::u64, DType::f16,
                                DType::bf16, DType::f32, DType::f64};

} // namespace

TEST_CASE("npy: every dtype round-trips with its shape and bytes") {
  TempDir dir;
  for (DType t : kAllDTypes) {
    CAPTURE(kiln::dtype_short_name(t));
    const std::string path = dir.file("a.npy");
    const HostTensor in = patterned(t, {3, 5});
    write_npy(path, in);
    // NumPy has no bfloat16: a bf16 tensor comes back through ':bf16'.
    const HostTensor out = t == DType::bf16 ? read_npy(path, DType::bf16) : read_npy(path);
    CHECK(out.dtype() == t);
    CHECK(out.shape() == std::vector<int64_t>{3, 5});
    CHECK(same_bytes(in, out));
  }
}

TEST_CASE("npy: 0-d, 1-d, 3-d and empty shapes round-trip") {
  TempDir dir;
  const std::vector<std::vector<int64_t>> shapes = {{},  {7},       {2, 3, 4},
                                                    {0}, {5, 0, 2}, {1, 2, 1, 2, 3}};
  for (const auto &shape : shapes) {
    CAPTURE(kiln::cli::format_shape(shape));
    const HostTensor in = patterned(DType::f32, shape);
    write_npy(dir.file("s.npy"), in);
    const HostTensor out = read_npy(dir.file("s.npy"));
    CHECK(out.shape() == shape);
    CHECK(out.numel() == in.numel());
    CHECK(same_bytes(in, out));
  }
}

TEST_CASE("npy: the written header is NumPy's: version 1.0, a dict padded to 64 bytes, '\\n'") {
  TempDir dir;
  const std::string path = dir.file("h.npy");
  write_npy(path, patterned(DType::f32, {3, 4}));
  const std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 10);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len =
      static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::size_t data_start = 10 + header_len;
  CHECK(data_start % 64 == 0);
  CHECK(bytes.size() == data_start + 3 * 4 * 4);
  CHECK(bytes[data_start - 1] == '\n');
  CHECK(bytes.substr(10, 60).starts_with(npy_dict("<f4", "(3, 4)")));
  // Exactly what numpy.save writes for a 0-d float32 and a 1-d bool.
  write_npy(path, patterned(DType::f32, {}));
  CHECK(read_bytes(path).substr(10).starts_with(npy_dict("<f4", "()")));
  write_npy(path, patterned(DType::i1, {2}));
  CHECK(read_bytes(path).substr(10).starts_with(npy_dict("|b1", "(2,)")));
}

TEST_CASE("npy: descrs of the written files") {
  CHECK(kiln::cli::npy_descr(DType::f16) == "<f2");
  CHECK(kiln::cli::npy_descr(DType::f64) == "<f8");
  CHECK(kiln::cli::npy_descr(DType::i8) == "|i1");
  CHECK(kiln::cli::npy_descr(DType::u8) == "|u1");
  CHECK(kiln::cli::npy_descr(DType::i1) == "|b1");
  CHECK(kiln::cli::npy_descr(DType::u64) == "<u8");
  CHECK(kiln::cli::npy_descr(DType::bf16) == "<u2");
}

TEST_CASE("npy: reads files NumPy wrote in versions 1.0, 2.0 and 3.0") {
  TempDir dir;
  // Byte for byte what NumPy 1.24 wrote: np.save(np.arange(6, dtype='<i4').reshape(2, 3)),
  // format.write_array(np.array([1.5, -2.0]), version=(2, 0)), and a bool array at (3, 0).
  const std::string v1 = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                         "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }" +
                         std::string(58, ' ') + "\n" +
                         std::string("\0\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0\5\0\0\0", 24);
  const std::string v2 = std::string("\x93NUMPY\x02\x00t\x00\x00\x00", 12) +
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }" +
                         std::string(58, ' ') + "\n" +
                         std::string("\0\0\0\0\0\0\xf8\x3f\0\0\0\0\0\0\0\xc0", 16);
  const std::string v3 = std::string("\x93NUMPY\x03\x00t\x00\x00\x00", 12) +
                         "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" +
                         std::string(58, ' ') + "\n" + std::string("\1\0\1", 3);
  write_bytes(dir.file("v1.npy"), v1);
  write_bytes(dir.file("v2.npy"), v2);
  write_bytes(dir.file("v3.npy"), v3);

  const HostTensor a = read_npy(dir.file("v1.npy"));
  CHECK(a.dtype() == DType::i32);
  CHECK(a.shape() == std::vector<int64_t>{2, 3});
  CHECK(static_cast<const int32_t *>(a.data())[5] == 5);

  const HostTensor b = read_npy(dir.file("v2.npy"));
  CHECK(b.dtype() == DType::f64);
  CHECK(b.shape() == std::vector<int64_t>{2});
  CHECK(static_cast<const double *>(b.data())[0] == 1.5);
  CHECK(static_cast<const double *>(b.data())[1] == -2.0);

  const HostTensor c = read_npy(dir.file("v3.npy"));
  CHECK(c.dtype() == DType::i1);
  CHECK(static_cast<const uint8_t *>(c.data())[2] == 1);
}

TEST_CASE("npy: header spellings NumPy and Python 2 wrote are read") {
  TempDir dir;
  const std::string path = dir.file("p.npy");
  // Double quotes, another key order, no trailing comma, Python 2 longs.
  write_bytes(path, npy_file(1, R"({"shape": (2L, 1L), "fortran_order": False, "descr": "<u2"})",
                             std::string(4, '\x01')));
  const HostTensor t = read_npy(path);
  CHECK(t.dtype() == DType::u16);
  CHECK(t.shape() == std::vector<int64_t>{2, 1});
  // One-byte types have no byte order, whichever character marks it.
  for (const char *descr : {"|u1", "<u1", "|i1", "<i1", "|b1"}) {
    CAPTURE(descr);
    write_bytes(path, npy_file(1, npy_dict(descr, "(1,)"), "\x01"));
    CHECK_NOTHROW(read_npy(path));
  }
  // Trailing bytes after the data are ignored, as np.load does.
  write_bytes(path, npy_file(2, npy_dict("<f4", "(1,)"), std::string(8, '\0')));
  CHECK(read_npy(path).numel() == 1);
}

TEST_CASE("npy: a header that repeats a key takes the last, as NumPy does (issue 17.9)") {
  TempDir dir;
  const std::string path = dir.file("dup.npy");
  write_bytes(
      path,
      npy_file(
          1,
          "{'descr': '<f8', 'fortran_order': False, 'shape': (9,), 'descr': '<i2', 'shape': (2,)}",
          std::string(4, '\x01')));
  const HostTensor t = read_npy(path);
  CHECK(t.dtype() == DType::i16);
  CHECK(t.shape() == std::vector<int64_t>{2});
}

TEST_CASE("npy: each malformed file is an ArgumentError naming the file and the problem") {
  TempDir dir;
  struct Bad {
    const char *name;
    std::string bytes;
    const char *says;
  };
  const std::string f4 = std::string(8, '\0');
  const Bad cases[] = {
      {"magic.npy", "PK\x03\x04 not numpy at all", "not a NumPy .npy file"},
      {"short.npy", std::string("\x93NUM", 4), "not a NumPy .npy file"},
      {"version.npy", std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '),
       "version 4.0 is not supported; supported: 1.0, 2.0, 3.0"},
      {"big_endian.npy", npy_file(1, npy_dict(">f4", "(2,)"), f4), "big-endian dtype '>f4'"},
      {"fortran.npy", npy_file(1, npy_dict("<f4", "(2,)", true), f4),
       "Fortran-order arrays are not supported; save with np.ascontiguousarray"},
      {"object.npy", npy_file(1, npy_dict("|O", "(2,)"), f4 + f4), "object arrays"},
      {"complex.npy", npy_file(1, npy_dict("<c8", "(1,)"), f4), "dtype '<c8' is not supported"},
      {"string.npy", npy_file(1, npy_dict("<U3", "(1,)"), f4 + f4), "supported: '<f2'"},
      {"structured.npy",
       npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", f4),
       "structured dtypes"},
      {"truncated.npy", npy_file(1, npy_dict("<f4", "(3, 4)"), std::string(20, '\0')),
       "truncated: shape (3, 4) of '<f4' needs 48 bytes of data, the file has 20"},
      {"cut_header.npy", npy_file(1, npy_dict("<f4", "(2,)"), f4).substr(0, 40), "truncated"},
      {"not_dict.npy", npy_file(1, "[1, 2, 3]", ""), "not a dict"},
      {"garbage.npy", npy_file(1, "{'descr': <f4}", ""), "not a Python dict literal"},
      {"open_dict.npy", npy_file(1, "{'descr': '<f4', ", ""), "not a Python dict literal"},
      {"no_shape.npy", npy_file(1, "{'descr': '<f4', 'fortran_order': False}", f4),
       "no 'shape' key"},
      {"neg_shape.npy", npy_file(1, npy_dict("<f4", "(-2,)"), f4), "non-negative integers"},
      {"list_shape.npy", npy_file(1, npy_dict("<f4", "[2]"), f4), "not a tuple"},
      {"huge_shape.npy",
       npy_file(1, npy_dict("<f8", "(4611686018427387904, 4611686018427387904)"), f4), "too large"},
  };
  for (const Bad &b : cases) {
    CAPTURE(b.name);
    const std::string path = dir.file(b.name);
    write_bytes(path, b.bytes);
    const std::string message = read_error(path);
    CAPTURE(message);
    CHECK(message.starts_with(path + ": "));
    CHECK(message.find(b.says) != std::string::npos);
  }
}

TEST_CASE("npy: a missing or unwritable file is a RuntimeError naming it") {
  TempDir dir;
  const std::string missing = dir.file("missing.npy");
  CHECK_THROWS_AS(read_npy(missing), kiln::RuntimeError);
  try {
    read_npy(missing);
  } catch (const kiln::RuntimeError &e) {
    CHECK(std::string(e.what()).starts_with(missing + ": cannot open"));
  }
  CHECK_THROWS_AS(write_npy(dir.file("no/such/dir/x.npy"), patterned(DType::f32, {1})),
                  kiln::RuntimeError);
}

TEST_CASE("npy: ':bf16' reads only uint16 files, as bf16 bit patterns") {
  TempDir dir;
  const std::string path = dir.file("b.npy");
  // 1.0 and -2.0 in bf16.
  write_bytes(path, npy_file(1, npy_dict("<u2", "(2,)"), std::string("\x80\x3f\x00\xc0", 4)));
  const HostTensor t = read_npy(path, DType::bf16);
  CHECK(t.dtype() == DType::bf16);
  CHECK(static_cast<const uint16_t *>(t.data())[0] == 0x3f80);
  CHECK(static_cast<const uint16_t *>(t.data())[1] == 0xc000);
  // Without the override the same file is plain uint16.
  CHECK(read_npy(path).dtype() == DType::u16);

  write_bytes(path, npy_file(1, npy_dict("<f4", "(2,)"), std::string(8, '\0')));
  std::string message;
  try {
    read_npy(path, DType::bf16);
  } catch (const kiln::ArgumentError &e) {
    message = e.what();
  }
  CHECK(message.find("uint16") != std::string::npos);
  CHECK(message.find("'<f4'") != std::string::npos);
  // No other override: every other dtype is in the file already.
  CHECK_THROWS_AS(read_npy(path, DType::f32), kiln::ArgumentError);

  // A bf16 tensor is written as its uint16 bit patterns.
  write_npy(path, patterned(DType::bf16, {4}));
  CHECK(read_bytes(path).substr(10).starts_with(npy_dict("<u2", "(4,)")));
}
