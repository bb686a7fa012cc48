// Tests of MATLAB .mat support. With matio: round trips, variable selection, and the classes linv refuses,
// using MAT 5 files written byte by byte here for what linv itself does not write. Without matio: the error
// that says so.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "linv/errors.hpp"
#include "linv/io.hpp"
#include "support/files.hpp"
#include "support/round_trip.hpp"
#include "support/testing.hpp"

namespace {

using linv::index;
using namespace linv::testing;
using linv::Matrix;
using linv::io::AnyMatrix;
using linv::io::MatrixStack;

#define REQUIRE_MAT_SUPPORT()                                                                         \
  if (!linv::io::have_mat_support()) {                                                                \
    GTEST_SKIP() << "this linv was built without libmatio; .mat support is tested where it is found"; \
  }

// ---- MAT 5 files written byte by byte (little-endian, uncompressed) ----

namespace mat5 {

enum Type : std::uint32_t {
  miINT8 = 1,
  miUINT8 = 2,
  miINT16 = 3,
  miUINT16 = 4,
  miINT32 = 5,
  miUINT32 = 6,
  miSINGLE = 7,
  miDOUBLE = 9,
  miINT64 = 12,
  miMATRIX = 14
};
enum Class : std::uint32_t {
  mxCELL = 1, mxCHAR = 4, mxDOUBLE = 6, mxSINGLE = 7, mxUINT8 = 9, mxINT16 = 10, mxINT32 = 12, mxINT64 = 14
};
constexpr std::uint32_t kComplex = 0x08, kLogical = 0x02;

std::string u32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int k = 0; k < 4; ++k) s[k] = static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// A data element: tag, data, padding to 8 bytes.
std::string element(std::uint32_t type, const std::string& data) {
  return u32(type) + u32(static_cast<std::uint32_t>(data.size())) + data + std::string((8 - data.size() % 8) % 8, '\0');
}

// An miMATRIX element; `parts` are its data elements after the flags, dimensions and name.
std::string array(const std::string& name, Class cls, std::uint32_t flags, const std::vector<std::int32_t>& dims,
                  const std::string& parts) {
  const std::string body = element(miUINT32, u32(cls | flags << 8) + u32(0)) + element(miINT32, bytes_of(dims)) +
                           element(miINT8, name) + parts;
  return element(miMATRIX, body);
}

std::string file(const std::string& variables) {
  std::string header = "MATLAB 5.0 MAT-file, written by linv's tests";
  header.resize(116, ' ');
  header += std::string(8, '\0');  // subsystem data offset
  header += std::string("\x00\x01", 2) + "IM";
  return header + variables;
}

std::string doubles(const std::string& name, const std::vector<std::int32_t>& dims, const std::vector<double>& v) {
  return array(name, mxDOUBLE, 0, dims, element(miDOUBLE, bytes_of(v)));
}

}  // namespace mat5

TEST(Mat, WithoutMatioSaysSo) {
  if (linv::io::have_mat_support()) GTEST_SKIP() << "this linv has .mat support";
  linv::testing::TempDir dir;
  const std::string path = dir.file("a.mat");
  write_bytes(path, mat5::file(mat5::doubles("A", {1, 1}, {1.0})));
  const char* message = "this linv was built without MATLAB .mat support (libmatio was not found at build time)";
  for (const std::string& spec : {path, path + ":A"}) {
    try {
      linv::io::read_matrix(spec);
      ADD_FAILURE() << "no error";
    } catch (const linv::InputError& e) {
      EXPECT_TRUE(contains(e.what(), message));
      EXPECT_EQ(e.exit_code(), linv::ExitCode::bad_input);
    }
    EXPECT_THROW(linv::io::read_stack(spec), linv::InputError);
  }
  const Matrix<double> A(2, 2);
  EXPECT_THROW(linv::io::write_matrix<double>(dir.file("b.mat"), A.view()), linv::InputError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.mat")));
}

template <class T>
class MatTyped : public ::testing::Test {};
TYPED_TEST_SUITE(MatTyped, RealTypes);

TYPED_TEST(MatTyped, RoundTripsMatrices) {
  REQUIRE_MAT_SUPPORT();
  using T = TypeParam;
  round_trip_shapes<T>("a.mat", 400, [](const std::string& path, const Matrix<T>& A) {
    for (const std::string& spec : {path, path + ":X"}) {
      AnyMatrix back = linv::io::read_matrix(spec);
      ASSERT_TRUE(std::holds_alternative<Matrix<T>>(back)) << "single stays single, double stays double";
      expect_same(std::get<Matrix<T>>(back), A);
    }
  });
}

TYPED_TEST(MatTyped, RoundTripsStacks) {
  REQUIRE_MAT_SUPPORT();
  using T = TypeParam;
  linv::testing::TempDir dir;
  const index shapes[][3] = {{1, 1, 1}, {3, 4, 5}, {1, 3, 2}, {2, 0, 3}, {0, 2, 2}};
  for (std::size_t s = 0; s < std::size(shapes); ++s) {
    const std::uint64_t seed = linv::testing::case_seed(500 + s);
    LINV_TRACE_SEED(seed);
    MatrixStack<T> stack{shapes[s][0], shapes[s][1], shapes[s][2], {}};
    const Matrix<T> values = random_matrix<T>(stack.count * stack.rows * stack.cols, 1, seed);
    stack.data.assign(values.data(), values.data() + values.size());
    const std::string path = dir.file("s.mat:Stack");
    linv::io::write_stack(path, stack);
    const auto back = std::get<MatrixStack<T>>(linv::io::read_stack(path));
    EXPECT_EQ(back.count, stack.count);
    EXPECT_EQ(back.rows, stack.rows);
    EXPECT_EQ(back.cols, stack.cols);
    EXPECT_EQ(back.data, stack.data);
  }
}

TEST(Mat, WritesStridedViews) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const Matrix<double> big = random_matrix<double>(6, 5, linv::testing::case_seed(10));
  const std::string path = dir.file("v.mat");
  linv::io::write_matrix<double>(path, big.block(1, 2, 4, 3));
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path)), Matrix<double>::copy_of(big.block(1, 2, 4, 3)));
}

TEST(Mat, NamesVariables) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(3, 2, linv::testing::case_seed(11));
  const std::string path = dir.file("named.mat");
  linv::io::write_matrix<double>(path + ":Weights_2", A.view());
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path)), A);
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path + ":Weights_2")), A);
  const auto e = expect_parse_error([&] { linv::io::read_matrix(path + ":X"); }, path, "has no variable 'X'");
  if (e) {
    EXPECT_TRUE(contains(e->what(), "Weights_2 (3x2 double)"));
  }
  // Writing replaces the file: one variable per file.
  linv::io::write_matrix<double>(path + ":Other", A.view());
  expect_parse_error([&] { linv::io::read_matrix(path + ":Weights_2"); }, path, "has no variable 'Weights_2'");
}

TEST(Mat, RejectsInvalidVariableNames) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const Matrix<double> A(1, 1);
  for (const std::string& name : std::vector<std::string>{"1x", "has-dash", "_lead", "a b", std::string(64, 'v')}) {
    SCOPED_TRACE(name);
    try {
      linv::io::write_matrix<double>(dir.file("n.mat:" + name), A.view());
      ADD_FAILURE() << "no error";
    } catch (const linv::InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "not a valid MATLAB variable name"));
    }
  }
  linv::io::write_matrix<double>(dir.file("n.mat:" + std::string(63, 'v')), A.view());
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"n.mat"});
}

// A ':' in a directory name is part of the path; only one after ".mat" in the file name picks a variable.
TEST(Mat, ColonsInDirectoriesArePathCharacters) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  std::filesystem::create_directory(dir.path() / "run:1.mat:x");
  const std::string base = (dir.path() / "run:1.mat:x" / "m.mat").string();
  const Matrix<double> A = random_matrix<double>(2, 2, linv::testing::case_seed(12));
  linv::io::write_matrix<double>(base + ":V", A.view());
  EXPECT_TRUE(std::filesystem::exists(base));
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(base)), A);
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(base + ":V")), A);
}

TEST(Mat, SelectsTheOnlyNumericVariable) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const std::string path = dir.file("sel.mat");
  const std::string text =
      mat5::array("s", mat5::mxCHAR, 0, {1, 2}, mat5::element(mat5::miUINT16, std::string("h\0i\0", 4)));
  const std::string mask =
      mat5::array("L", mat5::mxUINT8, mat5::kLogical, {1, 1}, mat5::element(mat5::miUINT8, "\x01"));
  write_bytes(path, mat5::file(text + mat5::doubles("A", {2, 2}, {1, 2, 3, 4}) + mask));
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path)), Matrix<double>::from_rows({{1, 3}, {2, 4}}));

  const std::string single = mat5::array("B", mat5::mxSINGLE, 0, {1, 3},
                                         mat5::element(mat5::miSINGLE, mat5::bytes_of(std::vector<float>{5, 6, 7})));
  write_bytes(path, mat5::file(mat5::doubles("A", {2, 2}, {1, 2, 3, 4}) + single + text));
  const auto e = expect_parse_error([&] { linv::io::read_matrix(path); }, path, "holds 2 numeric variables");
  if (e) {
    for (const char* listed : {"A (2x2 double)", "B (1x3 single)", "s (1x2 char)", path.c_str()})
      EXPECT_TRUE(contains(e->what(), listed));
  }
  expect_same(std::get<Matrix<float>>(linv::io::read_matrix(path + ":B")), Matrix<float>::from_rows({{5, 6, 7}}));
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path + ":A")),
              Matrix<double>::from_rows({{1, 3}, {2, 4}}));

  write_bytes(path, mat5::file(text));
  expect_parse_error([&] { linv::io::read_matrix(path); }, path,
                     "holds no numeric variable to read (it holds s (1x2 char))");
  write_bytes(path, mat5::file(""));
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, "it holds no variables");
}

// Integer and logical variables are read as .npy integers are: as float64, exactly, with a note; a value
// float64 cannot hold exactly is refused naming it. Complex, cell and char variables are refused.
TEST(Mat, ReadsIntegersAndLogicalsExactlyAndRefusesOtherClasses) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const std::string path = dir.file("classes.mat");
  const std::string vars =
      mat5::array("I", mat5::mxINT32, 0, {1, 2},
                  mat5::element(mat5::miINT32, mat5::bytes_of(std::vector<std::int32_t>{-7, 2}))) +
      mat5::array("B", mat5::mxINT64, 0, {1, 1},
                  mat5::element(mat5::miINT64, mat5::bytes_of(std::vector<std::int64_t>{(std::int64_t{1} << 53) + 1}))) +
      mat5::array("Z", mat5::mxDOUBLE, mat5::kComplex, {1, 1},
                  mat5::element(mat5::miDOUBLE, mat5::bytes_of(std::vector<double>{1})) +
                      mat5::element(mat5::miDOUBLE, mat5::bytes_of(std::vector<double>{2}))) +
      mat5::array("C", mat5::mxCELL, 0, {1, 1}, mat5::doubles("", {1, 1}, {3})) +
      mat5::array("s", mat5::mxCHAR, 0, {1, 1}, mat5::element(mat5::miUINT16, std::string("h\0", 2))) +
      mat5::array("L", mat5::mxUINT8, mat5::kLogical, {1, 1}, mat5::element(mat5::miUINT8, "\x01"));
  write_bytes(path, mat5::file(vars));
  const auto ints = linv::io::convert<double>(linv::io::read_matrix(path + ":I"), false);
  EXPECT_EQ(ints(0, 0), -7.0);
  EXPECT_EQ(ints(0, 1), 2.0);
  const auto logical = linv::io::convert<double>(linv::io::read_matrix(path + ":L"), false);
  EXPECT_EQ(logical(0, 0), 1.0);
  (void)linv::io::take_input_notes();
  try {
    (void)linv::io::read_matrix(path + ":B");
    ADD_FAILURE() << "2^53 + 1 has no float64";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(linv::testing::contains(e.what(), "beyond +-2^53")) << e.what();
  }
  for (const auto& [name, what] : {std::pair{"C", "variable 'C' is 1x1 cell"}, {"s", "variable 's' is 1x1 char"}}) {
    SCOPED_TRACE(name);
    const std::string spec = path + ":" + name;
    expect_parse_error([&] { linv::io::read_matrix(spec); }, path, what);
    expect_parse_error([&] { linv::io::read_dense(spec); }, path, what);
    expect_parse_error([&] { linv::io::read_stack(spec); }, path, "linv reads double, single, integer and logical");
  }
  // complex: read_dense reads it; the real readers say what it is
  EXPECT_EQ(std::get<Matrix<std::complex<double>>>(linv::io::read_dense(path + ":Z"))(0, 0), std::complex<double>(1, 2));
  expect_parse_error([&] { linv::io::read_matrix(path + ":Z"); }, path,
                     "variable 'Z' is 1x1 complex double, where real numbers are read");
  expect_parse_error([&] { linv::io::read_stack(path + ":Z"); }, path, "read as matrices, not stacks");
  // real variables come through read_dense in their own type
  EXPECT_TRUE(std::holds_alternative<Matrix<double>>(linv::io::read_dense(path + ":I")));
}

// Complex variables as MATLAB writes them: single and double round trips bit for bit (signed zeros,
// subnormal and extreme parts), and complex integer classes (MATLAB's int16(3) + 4i) read exactly as
// complex128, as real integers are, beyond 2^53 refused.
TEST(Mat, RoundTripsComplexMatricesAndReadsComplexIntegersExactly) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  std::mt19937_64 g(linv::testing::case_seed(20));
  std::uniform_real_distribution<double> u(-1, 1);
  const auto round_trip = [&]<class C>(index rows, index cols) {
    SCOPED_TRACE(linv::shape_string(rows, cols));
    using R = typename C::value_type;
    Matrix<C> a(rows, cols);
    for (index k = 0; k < a.size(); ++k)
      a.data()[k] = C(static_cast<R>(u(g) * std::pow(2.0, 100 * u(g))), static_cast<R>(u(g)));
    if (a.size() > 2) a.data()[1] = C(R(-0.0), std::numeric_limits<R>::denorm_min());
    for (const std::string& spec : {dir.file("c.mat"), dir.file("c.mat:Zc")}) {
      linv::io::write_matrix<C>(spec, a.view());
      const auto back = std::get<Matrix<C>>(linv::io::read_dense(spec));
      ASSERT_EQ(back.rows(), rows);
      ASSERT_EQ(back.cols(), cols);
      for (index k = 0; k < a.size(); ++k)
        EXPECT_EQ(std::memcmp(&back.data()[k], &a.data()[k], sizeof(C)), 0) << k;
    }
  };
  for (const auto& [rows, cols] : {std::pair<index, index>{0, 0}, {1, 1}, {3, 0}, {5, 7}, {64, 33}}) {
    round_trip.operator()<std::complex<float>>(rows, cols);
    round_trip.operator()<std::complex<double>>(rows, cols);
  }
  // a strided view is written as its own columns
  Matrix<std::complex<double>> big(6, 5);
  for (index k = 0; k < big.size(); ++k) big.data()[k] = {u(g), u(g)};
  linv::io::write_matrix<std::complex<double>>(dir.file("v.mat"), big.view().block(1, 2, 4, 3));
  const auto part = std::get<Matrix<std::complex<double>>>(linv::io::read_dense(dir.file("v.mat")));
  for (index j = 0; j < 3; ++j)
    for (index i = 0; i < 4; ++i) EXPECT_EQ(part(i, j), big(i + 1, j + 2));

  const std::string path = dir.file("ints.mat");
  write_bytes(path, mat5::file(
                        mat5::array("Q", mat5::mxINT16, mat5::kComplex, {2, 1},
                                    mat5::element(mat5::miINT16, mat5::bytes_of(std::vector<std::int16_t>{3, -32768})) +
                                        mat5::element(mat5::miINT16, mat5::bytes_of(std::vector<std::int16_t>{4, 7}))) +
                        mat5::array("W", mat5::mxINT64, mat5::kComplex, {1, 1},
                                    mat5::element(mat5::miINT64, mat5::bytes_of(std::vector<std::int64_t>{1})) +
                                        mat5::element(mat5::miINT64, mat5::bytes_of(std::vector<std::int64_t>{
                                                                         (std::int64_t{1} << 53) + 1})))));
  const auto q = std::get<Matrix<std::complex<double>>>(linv::io::read_dense(path + ":Q"));
  EXPECT_EQ(q(0, 0), std::complex<double>(3, 4));
  EXPECT_EQ(q(1, 0), std::complex<double>(-32768, 7));
  try {
    (void)linv::io::read_dense(path + ":W");
    ADD_FAILURE() << "an imaginary part of 2^53 + 1 has no float64";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(linv::testing::contains(e.what(), "beyond +-2^53")) << e.what();
  }
}

TEST(Mat, ReadsThreeDimensionalArraysAsStacks) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const std::string path = dir.file("stack.mat");
  // MATLAB's 2x3x2 array, column-major: element (i, j, k) at i + 2j + 6k holds that offset.
  std::vector<double> values(12);
  for (int k = 0; k < 12; ++k) values[k] = k;
  write_bytes(path, mat5::file(mat5::doubles("S", {2, 3, 2}, values) +
                               mat5::doubles("T", {2, 3, 1}, std::vector<double>(values.begin(), values.begin() + 6))));
  const auto s = std::get<MatrixStack<double>>(linv::io::read_stack(path + ":S"));
  ASSERT_EQ(s.count, 2);
  ASSERT_EQ(s.rows, 2);
  ASSERT_EQ(s.cols, 3);
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(s[k](i, j), i + 2 * j + 6 * k);
  expect_parse_error([&] { linv::io::read_matrix(path + ":S"); }, path, "variable 'S' is a 3-dimensional 2x3x2 array");
  // A trailing singleton dimension does not make a stack.
  const Matrix<double> t = std::get<Matrix<double>>(linv::io::read_matrix(path + ":T"));
  EXPECT_EQ(t.rows(), 2);
  EXPECT_EQ(t.cols(), 3);
  EXPECT_EQ(t(1, 2), 5);
  // And a matrix is a stack of one.
  const auto one = std::get<MatrixStack<double>>(linv::io::read_stack(path + ":T"));
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(one.data, std::vector<double>(values.begin(), values.begin() + 6));
}

TEST(Mat, RejectsMalformedFiles) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const std::string path = dir.file("bad.mat");
  write_bytes(path, "");
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, "the file is empty");
  write_bytes(path, "hello, this is not a MATLAB file\n");
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, "not a MATLAB .mat file");

  // Every proper prefix of a file is malformed. (matio itself would fill a truncated variable with zeros.)
  const Matrix<double> A = random_matrix<double>(20, 10, linv::testing::case_seed(13));
  const std::string good = dir.file("good.mat");
  linv::io::write_matrix<double>(good, A.view());
  const std::string written = read_bytes(good);
  const std::string plain = mat5::file(mat5::doubles("A", {2, 2}, {1, 2, 3, 4}));
  for (const std::string& full : {written, plain}) {
    for (std::size_t n = 0; n < full.size(); ++n) {
      SCOPED_TRACE(n);
      write_bytes(path, full.substr(0, n));
      EXPECT_THROW(linv::io::read_matrix(path), linv::ParseError);
    }
  }
  write_bytes(path, plain.substr(0, 200));
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, "truncated data element");
}

// A header may announce any size, and matio allocates what the headers of a MAT 4 variable, a name, a
// struct or a cell array announce before reading it: linv compares each with the bytes that must hold it
// first. Refusals, never allocations of gigabytes.
TEST(Mat, RefusesHeadersAnnouncingMoreThanTheFileHolds) {
  REQUIRE_MAT_SUPPORT();
  using namespace mat5;
  linv::testing::TempDir dir;
  // MAT 4: type (0: little-endian doubles), rows, columns, imaginary flag, name length; the name; the data.
  const auto mat4 = [](std::uint32_t rows, std::uint32_t cols, std::uint32_t name_length, const std::string& rest) {
    return u32(0) + u32(rows) + u32(cols) + u32(0) + u32(name_length) + rest;
  };
  // A field name length as matio reads it, a small element; then the names, 8 bytes each.
  const std::string one_field = u32(miINT32 | 4 << 16) + u32(8) + element(miINT8, std::string("x\0\0\0\0\0\0\0", 8));
  // An array whose name tag announces 2 GiB.
  const std::string long_name = element(miUINT32, u32(mxDOUBLE) + u32(0)) +
                                element(miINT32, bytes_of<std::int32_t>({1, 1})) + u32(miINT8) + u32(0x7fffffff);
  struct Case {
    const char* name;
    std::string bytes;
    std::string fault;
  };
  const Case cases[] = {
      {"mat4-name", mat4(2, 2, 0x71000002, "A"),
       "a MAT 4 variable header declares a name of 1895825410 bytes, but 1 follow it"},
      {"mat4-data", mat4(100000, 100000, 2, std::string("A\0", 2)),
       "a 100000x100000 MAT 4 variable needs 80000000000 bytes, but 0 follow its name"},
      {"struct", file(array("s", Class{2}, 0, {100000, 100000}, one_field)),
       "a struct announces 10000000000 fields, but the 0 bytes left in it hold at most 0"},
      {"cell", file(array("c", mxCELL, 0, {100000, 100000}, "")),
       "a cell array or function handle announces 10000000000 elements"},
      {"name", file(element(miMATRIX, long_name)), "its headers announce more bytes than the 40 of its array"},
      {"double", file(doubles("A", {100000, 100000}, {1.0})),
       "variable 'A' is 100000x100000 double: 80000000000 bytes, more than the file's"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(std::string(c.name) + ".mat");
    write_bytes(path, c.bytes);
    expect_parse_error([&] { linv::io::read_matrix(path); }, path, c.fault);
  }
}

TEST(Mat, MissingFilesAndFailedWrites) {
  REQUIRE_MAT_SUPPORT();
  linv::testing::TempDir dir;
  const std::string missing = dir.file("missing.mat");
  try {
    linv::io::read_matrix(missing + ":A");
    ADD_FAILURE() << "no error";
  } catch (const linv::ParseError& e) {
    ADD_FAILURE() << "a missing file is not a parse error: " << e.what();
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), missing));
    EXPECT_TRUE(contains(e.what(), std::strerror(ENOENT)));
  }
  const Matrix<double> A(2, 2);
  const std::string nowhere = dir.file("nowhere/a.mat");
  try {
    linv::io::write_matrix<double>(nowhere + ":A", A.view());
    ADD_FAILURE() << "no error";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "could not write " + nowhere));
  }
  // Over a directory: the target stays as it was and no temporary file is left.
  std::filesystem::create_directory(dir.file("out.mat"));
  EXPECT_THROW(linv::io::write_matrix<double>(dir.file("out.mat"), A.view()), linv::InputError);
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("out.mat")));
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"out.mat"});
}

}  // namespace
