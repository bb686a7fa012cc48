// Tests of the .npy reader and writer, and of what io.cpp does for every format: choosing the format from
// the file name, element-type conversion and atomic writes. Malformed and variant files are written byte by
// byte here, so the tests need no data files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
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
using linv::io::AnyStack;
using linv::io::MatrixStack;

// A .npy file with the given header dict (padded and terminated as NumPy does) and data bytes.
std::string npy(const std::string& dict, const std::string& data = {}, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t n = header.size();
  for (std::size_t k = 0; k < prefix - 8; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  return out + header + data;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}

template <class T>
std::vector<T> iota_values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<T>(k);
  return v;
}

template <linv::Real T>
constexpr const char* descr() {
  return std::same_as<T, float> ? "<f4" : "<f8";
}

template <class T>
class NpyTyped : public ::testing::Test {};
TYPED_TEST_SUITE(NpyTyped, RealTypes);

TYPED_TEST(NpyTyped, RoundTripsMatrices) {
  using T = TypeParam;
  round_trip_shapes<T>("a.npy", 100, [](const std::string& path, const Matrix<T>& A) {
    AnyMatrix back = linv::io::read_matrix(path);
    ASSERT_TRUE(std::holds_alternative<Matrix<T>>(back));
    expect_same(std::get<Matrix<T>>(back), A);
  });
}

TYPED_TEST(NpyTyped, WritesStridedViews) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  const std::uint64_t seed = linv::testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Matrix<T> big = random_matrix<T>(9, 8, seed);
  const std::string path = dir.file("block.npy");
  linv::io::write_matrix<T>(path, big.block(2, 1, 4, 5));
  const Matrix<T> back = std::get<Matrix<T>>(linv::io::read_matrix(path));
  expect_same(back, Matrix<T>::copy_of(big.block(2, 1, 4, 5)));
}

TYPED_TEST(NpyTyped, WritesNumpyLayout) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  const Matrix<T> A = random_matrix<T>(5, 7, linv::testing::case_seed(2));
  const std::string path = dir.file("layout.npy");
  linv::io::write_matrix<T>(path, A.view());
  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u) << "the data must start at a multiple of 64 bytes";
  const std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.rfind("{'descr': '" + std::string(descr<T>()) + "', 'fortran_order': True, 'shape': (5, 7), }", 0),
            0u)
      << header;
  ASSERT_EQ(bytes.size(), 10 + header_len + A.bytes());
  EXPECT_EQ(std::memcmp(bytes.data() + 10 + header_len, A.data(), A.bytes()), 0) << "data must be column-major as is";
}

TYPED_TEST(NpyTyped, ReadsCAndFortranOrder) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  const std::string d = descr<T>();
  // 3x4 with element (i, j) = 10*i + j, stored row by row and column by column.
  std::vector<T> c_order, f_order;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) c_order.push_back(static_cast<T>(10 * i + j));
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) f_order.push_back(static_cast<T>(10 * i + j));
  for (const auto& [name, fortran, data] :
       {std::tuple{"c.npy", "False", raw(c_order)}, {"f.npy", "True", raw(f_order)}}) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    write_bytes(path, npy(fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': (3, 4), }}", d, fortran), data));
    const Matrix<T> A = std::get<Matrix<T>>(linv::io::read_matrix(path));
    ASSERT_EQ(A.rows(), 3);
    ASSERT_EQ(A.cols(), 4);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(A(i, j), static_cast<T>(10 * i + j));
  }
}

// Shapes large enough to go through the transposing reader's buffer in several pieces, including rows
// longer than the buffer.
TEST(Npy, TransposesLargeCOrderArrays) {
  linv::testing::TempDir dir;
  for (const auto& [rows, cols] : {std::pair<index, index>{700, 500}, {2, 200000}, {200000, 2}, {1, 300000}}) {
    SCOPED_TRACE(linv::shape_string(rows, cols));
    const std::string path = dir.file("big.npy");
    write_bytes(path, npy(fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols),
                          raw(iota_values<double>(static_cast<std::size_t>(rows * cols)))));
    const Matrix<double> A = std::get<Matrix<double>>(linv::io::read_matrix(path));
    ASSERT_EQ(A.rows(), rows);
    ASSERT_EQ(A.cols(), cols);
    for (index j = 0; j < cols; ++j)
      for (index i = 0; i < rows; ++i) ASSERT_EQ(A(i, j), static_cast<double>(i * cols + j)) << i << ", " << j;
  }
}

TEST(Npy, ReadsOneAndZeroDimensionalArrays) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("v.npy");
  write_bytes(path, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", raw(iota_values<double>(4))));
  const Matrix<double> v = std::get<Matrix<double>>(linv::io::read_matrix(path));
  ASSERT_EQ(v.rows(), 4);
  ASSERT_EQ(v.cols(), 1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v(i, 0), i);

  write_bytes(path, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw(std::vector<float>{2.5f})));
  const Matrix<float> s = std::get<Matrix<float>>(linv::io::read_matrix(path));
  ASSERT_EQ(s.rows(), 1);
  ASSERT_EQ(s.cols(), 1);
  EXPECT_EQ(s(0, 0), 2.5f);

  write_bytes(path, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }"));
  const Matrix<double> e = std::get<Matrix<double>>(linv::io::read_matrix(path));
  EXPECT_EQ(e.rows(), 0);
  EXPECT_EQ(e.cols(), 1);
}

// Vectors come back as vectors: is_vector tells a 1-D array from a one-column matrix, and write_vector
// writes NumPy's 1-D shape (in .npz members too), an n x 1 matrix where a format has no vectors.
TEST(Npy, VectorsStayVectors) {
  linv::testing::TempDir dir;
  const Matrix<double> v = random_matrix<double>(6, 1, linv::testing::case_seed(9));
  const std::string path = dir.file("v.npy");
  linv::io::write_vector<double>(path, v.view());
  const std::string bytes = read_bytes(path);
  EXPECT_NE(bytes.find("'shape': (6,), }"), std::string::npos) << bytes.substr(0, 80);
  EXPECT_TRUE(linv::io::is_vector(path));
  const Matrix<double> back = std::get<Matrix<double>>(linv::io::read_matrix(path));
  ASSERT_EQ(back.rows(), 6);
  ASSERT_EQ(back.cols(), 1);
  for (index i = 0; i < 6; ++i) EXPECT_EQ(back(i, 0), v(i, 0));
  linv::io::write_matrix<double>(dir.file("m.npy"), v.view());
  EXPECT_FALSE(linv::io::is_vector(dir.file("m.npy")));  // (6, 1) is a matrix
  linv::io::write_vector<double>(dir.file("v.mtx"), v.view());
  EXPECT_FALSE(linv::io::is_vector(dir.file("v.mtx")));
  EXPECT_EQ(std::get<Matrix<double>>(linv::io::read_matrix(dir.file("v.mtx"))).cols(), 1);
  if (linv::io::have_npz_support()) {
    linv::io::write_vector<double>(dir.file("v.npz") + ":x", v.view());
    EXPECT_TRUE(linv::io::is_vector(dir.file("v.npz") + ":x"));
  }
  const Matrix<double> two = random_matrix<double>(6, 2, linv::testing::case_seed(10));
  EXPECT_THROW(linv::io::write_vector<double>(dir.file("w.npy"), two.view()), linv::InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir.file("w.npy")));
  EXPECT_THROW((void)linv::io::is_vector(dir.file("missing.npy")), linv::InputError);
}

TEST(Npy, ReadsHeaderVariants) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("h.npy");
  const std::string data = raw(std::vector<double>{1, 2, 3, 4, 5, 6});
  const std::string dicts[] = {
      "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
      "{'descr': '=f8', 'fortran_order': True, 'shape': (2, 3)}",          // native spelling, no comma
      "{\"descr\": \"<f8\", \"fortran_order\": True, \"shape\": (2, 3)}",  // double quotes
      "{'shape': (2L, 3L), 'fortran_order': True, 'descr': '<f8'}",        // Python 2 longs, any order
      "  { 'descr' : '<f8' ,\t'fortran_order' : True , 'shape' : ( 2 , 3 , ) , }  ",
  };
  for (const std::string& dict : dicts) {
    for (int major : {1, 2, 3}) {
      SCOPED_TRACE(dict + " version " + std::to_string(major));
      write_bytes(path, npy(dict, data, major));
      const Matrix<double> A = std::get<Matrix<double>>(linv::io::read_matrix(path));
      ASSERT_EQ(A.rows(), 2);
      ASSERT_EQ(A.cols(), 3);
      for (int k = 0; k < 6; ++k) EXPECT_EQ(A.data()[k], k + 1);
    }
  }
}

TYPED_TEST(NpyTyped, ReadsStacksInBothOrders) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  // (2, 3, 4) with element [b][i][j] = 100*b + 10*i + j.
  std::vector<T> c_order, f_order;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) c_order.push_back(static_cast<T>(100 * b + 10 * i + j));
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      for (int b = 0; b < 2; ++b) f_order.push_back(static_cast<T>(100 * b + 10 * i + j));
  for (const auto& [fortran, data] : {std::pair{"False", raw(c_order)}, {"True", raw(f_order)}}) {
    SCOPED_TRACE(fortran);
    const std::string path = dir.file("s.npy");
    write_bytes(
        path,
        npy(fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': (2, 3, 4), }}", descr<T>(), fortran), data));
    const auto stack = std::get<MatrixStack<T>>(linv::io::read_stack(path));
    ASSERT_EQ(stack.count, 2);
    ASSERT_EQ(stack.rows, 3);
    ASSERT_EQ(stack.cols, 4);
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) EXPECT_EQ(stack[b](i, j), static_cast<T>(100 * b + 10 * i + j));
    // One matrix was asked for, a stack is there.
    expect_parse_error([&] { linv::io::read_matrix(path); }, path, "stack of 2 matrices");
  }
}

// read_stack_part: the parts of a stack, read from their own bytes (C order) or cut from the whole
// (Fortran order, a 2-D file), cover every matrix once, in order, and equal read_stack's.
TYPED_TEST(NpyTyped, ReadsPartsOfStacks) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  MatrixStack<T> stack{7, 3, 4, {}};
  const Matrix<T> values = random_matrix<T>(7 * 3 * 4, 1, linv::testing::case_seed(230));
  stack.data.assign(values.data(), values.data() + values.size());
  const std::string c_path = dir.file("c.npy"), f_path = dir.file("f.npy"), m_path = dir.file("m.npy");
  linv::io::write_stack(c_path, stack);  // C order
  std::vector<T> f_order;                // [b][i][j] at b + 7 (i + 3 j)
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      for (int b = 0; b < 7; ++b) f_order.push_back(stack[b](i, j));
  write_bytes(f_path, npy(fmt::format("{{'descr': '{}', 'fortran_order': True, 'shape': (7, 3, 4), }}", descr<T>()),
                          raw(f_order)));
  for (const std::string& path : {c_path, f_path})
    for (int parts : {1, 2, 3, 7, 9}) {
      SCOPED_TRACE(fmt::format("{} in {} parts", path, parts));
      index next = 0;
      for (int part = 0; part < parts; ++part) {
        const linv::io::StackPart p = linv::io::read_stack_part(path, part, parts);
        const auto& s = std::get<MatrixStack<T>>(p.stack);
        EXPECT_EQ(p.first, next);
        EXPECT_EQ(p.total, 7);
        ASSERT_EQ(s.rows, 3);
        ASSERT_EQ(s.cols, 4);
        for (index b = 0; b < s.count; ++b)
          for (index j = 0; j < 4; ++j)
            for (index i = 0; i < 3; ++i) ASSERT_EQ(s[b](i, j), stack[p.first + b](i, j));
        next += s.count;
      }
      EXPECT_EQ(next, 7);
    }
  linv::io::write_matrix<T>(m_path, stack[0]);
  const linv::io::StackPart one = linv::io::read_stack_part(m_path, 0, 1);
  EXPECT_EQ(one.total, 1);
  EXPECT_EQ(std::get<MatrixStack<T>>(one.stack).count, 1);
  EXPECT_THROW(linv::io::read_stack_part(c_path, 2, 2), linv::InvalidArgument);
  // a truncated C-order file is refused by its size, whichever part is asked for
  const std::string bytes = read_bytes(c_path), cut = dir.file("cut.npy");
  write_bytes(cut, bytes.substr(0, bytes.size() - sizeof(T)));
  EXPECT_THROW(linv::io::read_stack_part(cut, 0, 2), linv::ParseError);
}

// read_matrix_columns: the parts of a matrix's columns, from their own bytes in either order, cover every
// column once, in order; an integer file is read whole and cut.
TYPED_TEST(NpyTyped, ReadsPartsOfColumns) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  const Matrix<T> A = random_matrix<T>(5, 11, linv::testing::case_seed(240));
  const std::string f_path = dir.file("f.npy"), c_path = dir.file("c.npy");
  linv::io::write_matrix<T>(f_path, A.view());  // Fortran order
  std::vector<T> c_order;
  for (index i = 0; i < 5; ++i)
    for (index j = 0; j < 11; ++j) c_order.push_back(A(i, j));
  write_bytes(c_path, npy(fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (5, 11), }}", descr<T>()),
                          raw(c_order)));
  for (const std::string& path : {f_path, c_path})
    for (int parts : {1, 2, 3, 11, 12}) {
      SCOPED_TRACE(fmt::format("{} in {} parts", path, parts));
      index next = 0;
      for (int part = 0; part < parts; ++part) {
        const linv::io::ColumnPart p = linv::io::read_matrix_columns(path, part, parts);
        const auto& m = std::get<Matrix<T>>(p.matrix);
        EXPECT_EQ(p.first, next);
        EXPECT_EQ(p.total, 11);
        ASSERT_EQ(m.rows(), 5);
        for (index j = 0; j < m.cols(); ++j)
          for (index i = 0; i < 5; ++i) ASSERT_EQ(m(i, j), A(i, p.first + j));
        next += m.cols();
      }
      EXPECT_EQ(next, 11);
    }
  EXPECT_THROW(linv::io::read_matrix_columns(f_path, 0, 0), linv::InvalidArgument);
  const std::string bytes = read_bytes(c_path), cut = dir.file("cut.npy");
  write_bytes(cut, bytes.substr(0, bytes.size() - sizeof(T)));
  EXPECT_THROW(linv::io::read_matrix_columns(cut, 1, 2), linv::ParseError);
}

TEST(Npy, ReadsLargeFortranOrderStacks) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("s.npy");
  const index B = 140000, r = 1, c = 2;
  // Fortran order: [b][i][j] at b + B*(i + r*j); the value written there is that offset.
  write_bytes(path, npy("{'descr': '<f8', 'fortran_order': True, 'shape': (140000, 1, 2), }",
                        raw(iota_values<double>(B * r * c))));
  const auto s = std::get<MatrixStack<double>>(linv::io::read_stack(path));
  ASSERT_EQ(s.count, B);
  for (index b = 0; b < B; ++b)
    for (index j = 0; j < c; ++j) ASSERT_EQ(s[b](0, j), static_cast<double>(b + B * j));
}

TEST(Npy, ReadsMatricesAsStacksOfOne) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("m.npy");
  const Matrix<double> A = random_matrix<double>(3, 2, linv::testing::case_seed(3));
  linv::io::write_matrix<double>(path, A.view());
  const auto s = std::get<MatrixStack<double>>(linv::io::read_stack(path));
  ASSERT_EQ(s.count, 1);
  ASSERT_EQ(s.rows, 3);
  ASSERT_EQ(s.cols, 2);
  for (index j = 0; j < 2; ++j)
    for (index i = 0; i < 3; ++i) EXPECT_EQ(s[0](i, j), A(i, j));
}

TYPED_TEST(NpyTyped, RoundTripsStacks) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  const index shapes[][3] = {{0, 2, 2}, {1, 1, 1}, {3, 4, 5}, {2, 0, 3}, {4, 6, 1}};
  for (std::size_t s = 0; s < std::size(shapes); ++s) {
    const std::uint64_t seed = linv::testing::case_seed(200 + s);
    LINV_TRACE_SEED(seed);
    MatrixStack<T> stack{shapes[s][0], shapes[s][1], shapes[s][2], {}};
    const Matrix<T> values = random_matrix<T>(stack.count * stack.rows * stack.cols, 1, seed);
    stack.data.assign(values.data(), values.data() + values.size());
    const std::string path = dir.file("stack.npy");
    linv::io::write_stack(path, stack);
    const std::string bytes = read_bytes(path);
    EXPECT_TRUE(contains(
        bytes, fmt::format("'fortran_order': False, 'shape': ({}, {}, {}), }}", stack.count, stack.rows, stack.cols)));
    const auto back = std::get<MatrixStack<T>>(linv::io::read_stack(path));
    EXPECT_EQ(back.count, stack.count);
    EXPECT_EQ(back.rows, stack.rows);
    EXPECT_EQ(back.cols, stack.cols);
    EXPECT_EQ(back.data, stack.data);
  }
}

TEST(Npy, StacksAreWrittenInCOrder) {
  linv::testing::TempDir dir;
  MatrixStack<double> stack{2, 2, 3, {}};
  stack.data.resize(12);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) stack[b](i, j) = 100 * b + 10 * i + j;
  const std::string path = dir.file("c.npy");
  linv::io::write_stack(path, stack);
  const std::string bytes = read_bytes(path);
  ASSERT_EQ(bytes.size() % 8, 0u);
  std::vector<double> data((bytes.size() - 128) / 8);
  ASSERT_EQ(data.size(), 12u) << "a small header takes 128 bytes";
  std::memcpy(data.data(), bytes.data() + 128, 96);
  EXPECT_EQ(data, (std::vector<double>{0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112}));
}

struct Malformed {
  const char* name;
  std::string bytes;
  const char* fault;
  std::int64_t offset;  // -1: not checked
};

TEST(Npy, RejectsMalformedFiles) {
  linv::testing::TempDir dir;
  const std::string f8x6 = raw(std::vector<double>(6));
  std::string v2_absurd = npy("{'descr': '<f8', 'fortran_order': True, 'shape': (0,), }", {}, 2);
  v2_absurd[8] = v2_absurd[9] = v2_absurd[10] = '\xff';
  v2_absurd[11] = '\x7f';
  const std::string ok = npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f8x6);
  const Malformed cases[] = {
      {"empty", "", "empty", 0},
      {"wrong magic", std::string("\x93NUMPX\x01\x00", 8) + ok.substr(8), "magic string", 0},
      {"text file", "hello, world\n", "magic string", 0},
      {"version 4.0", "\x93NUMPY\x04" + ok.substr(7), "version 4.0", 6},
      {"version 1.1", "\x93NUMPY\x01\x01" + ok.substr(8), "version 1.1", 6},
      {"truncated preamble", ok.substr(0, 7), "truncated header", 7},
      {"truncated header length", ok.substr(0, 9), "truncated header", 9},
      {"truncated header", ok.substr(0, 50), "runs past the end of the file (50 bytes)", 8},
      {"absurd header length", v2_absurd, "implausible", 8},
      {"not a dict", npy("[1, 2, 3]"), "not a Python dict", 10},
      {"no descr", npy("{'fortran_order': True, 'shape': (2, 3), }", f8x6), "no 'descr' key", 10},
      {"no shape", npy("{'descr': '<f8', 'fortran_order': True, }", f8x6), "no 'shape' key", 10},
      {"no fortran_order", npy("{'descr': '<f8', 'shape': (2, 3), }", f8x6), "no 'fortran_order' key", 10},
      {"unknown key", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), 'x': 1}", f8x6),
       "unexpected key 'x'", -1},
      {"duplicate key", npy("{'descr': '<f8', 'descr': '<f8', 'fortran_order': True, 'shape': (2, 3)}", f8x6),
       "'descr' appears twice", -1},
      {"bad fortran_order", npy("{'descr': '<f8', 'fortran_order': 1, 'shape': (2, 3), }", f8x6), "True or False", 44},
      {"unterminated string", npy("{'descr': '<f8}"), "unterminated string", 20},
      {"no closing brace", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3)"), "expected ',' or '}'", -1},
      {"text after dict", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3)} x", f8x6),
       "after the header dict", -1},
      {"complex, read as real", npy("{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3), }", f8x6 + f8x6),
       "'<c16' holds complex numbers, and this reads real ones", 20},
      {"complex256", npy("{'descr': '<c32', 'fortran_order': True, 'shape': (2, 3), }", f8x6),
       "'<c32' is not supported: linv reads float32 ('<f4'), float64 ('<f8'), integers", 20},
      {"big-endian int32", npy("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", f8x6),
       "'>i4' is big-endian", 20},
      {"complex, too short", npy("{'descr': '<c16', 'fortran_order': True, 'shape': (1, 3), }", f8x6),
       "'<c16' holds complex numbers", 20},
      {"half", npy("{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }", f8x6), "'<f2' is not supported", 20},
      {"big-endian", npy("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", f8x6), "'>f8' is big-endian",
       20},
      {"structured", npy("{'descr': [('a', '<f8')], 'fortran_order': True, 'shape': (2, 3), }", f8x6), "structured",
       20},
      {"4-D", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2, 3, 1), }", f8x6), "has 4 dimensions", 59},
      {"negative", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (-2, 3), }", f8x6), "negative dimension", 59},
      {"not an integer", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2.0, 3), }", f8x6),
       "expected ',' or ')'", 61},
      {"shape not a tuple", npy("{'descr': '<f8', 'fortran_order': True, 'shape': 6, }", f8x6), "expected a tuple", 59},
      {"huge dimension", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (99999999999999999999,), }"),
       "too large", 60},
      {"overflowing shape", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (1000000000000, 1000000000000), }"),
       "overflows", 59},
      {"truncated data", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }", raw(std::vector<double>(5))),
       "shape (3, 4) of '<f8' needs 96 bytes, but 40 follow the header", 128},
      {"huge shape, no data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }"),
       "needs 4000000000000 bytes, but 0 follow", 128},
      {"extra data", npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", raw(std::vector<double>(5))),
       "8 extra bytes after the data", 128 + 32},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(std::string(c.name) + ".npy");
    write_bytes(path, c.bytes);
    const auto e = expect_parse_error([&] { linv::io::read_matrix(path); }, path, c.fault);
    if (e) {
      if (c.offset >= 0) {
        EXPECT_EQ(e->offset(), c.offset) << e->what();
      }
      EXPECT_EQ(e->line(), -1);
    }
    expect_parse_error([&] { linv::io::read_stack(path); }, path, c.fault);
  }
}

// Every proper prefix of a valid file is malformed, and reading one must say so, never crash.
// Integers and bools are values, read as float64 exactly in either order and as stacks, and said in the
// input notes; a 64-bit value beyond +-2^53, which float64 may round, is refused naming its position.
TEST(Npy, ReadsIntegersAsFloat64Exactly) {
  const linv::testing::TempDir dir;
  struct Case {
    const char* descr;
    std::string data;
    std::vector<double> c_order;  // the 2 x 3 values row by row
  };
  const std::vector<Case> cases = {
      {"<i8", raw(std::vector<std::int64_t>{-3, 0, 9007199254740992, 4, -9007199254740992, 7}),
       {-3, 0, 9007199254740992.0, 4, -9007199254740992.0, 7}},
      {"<u8", raw(std::vector<std::uint64_t>{1, 2, 3, 4, 5, 9007199254740992}), {1, 2, 3, 4, 5, 9007199254740992.0}},
      {"<i4", raw(std::vector<std::int32_t>{-2147483647 - 1, 1, 2, 3, 4, 2147483647}),
       {-2147483648.0, 1, 2, 3, 4, 2147483647.0}},
      {"<u4", raw(std::vector<std::uint32_t>{4294967295u, 1, 2, 3, 4, 5}), {4294967295.0, 1, 2, 3, 4, 5}},
      {"<i2", raw(std::vector<std::int16_t>{-32768, 1, 2, 3, 4, 32767}), {-32768, 1, 2, 3, 4, 32767}},
      {"<u2", raw(std::vector<std::uint16_t>{65535, 1, 2, 3, 4, 5}), {65535, 1, 2, 3, 4, 5}},
      {"|i1", std::string("\x80\x01\x02\x03\x04\x7f", 6), {-128, 1, 2, 3, 4, 127}},
      {"|u1", std::string("\xff\x01\x02\x03\x04\x05", 6), {255, 1, 2, 3, 4, 5}},
      {"|b1", std::string("\x01\x00\x00\x01\x01\x00", 6), {1, 0, 0, 1, 1, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.descr);
    const std::string path = dir.file("int.npy");
    write_bytes(path, npy(fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (2, 3), }}", c.descr), c.data));
    (void)linv::io::take_input_notes();
    const Matrix<double> m = std::get<Matrix<double>>(linv::io::read_matrix(path));
    ASSERT_EQ(m.rows(), 2);
    ASSERT_EQ(m.cols(), 3);
    for (index i = 0; i < 2; ++i)
      for (index j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), c.c_order[static_cast<std::size_t>(i * 3 + j)]);
    const std::vector<std::string> notes = linv::io::take_input_notes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_TRUE(contains(notes[0], "values read as float64 (exactly)")) << notes[0];
    // the same bytes in Fortran order are the transpose's row-by-row values
    write_bytes(path, npy(fmt::format("{{'descr': '{}', 'fortran_order': True, 'shape': (3, 2), }}", c.descr), c.data));
    const Matrix<double> t = std::get<Matrix<double>>(linv::io::read_matrix(path));
    for (index i = 0; i < 2; ++i)
      for (index j = 0; j < 3; ++j) EXPECT_EQ(t(j, i), m(i, j));
  }
  const std::string stack = dir.file("stack.npy");
  write_bytes(stack, npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 1, 2), }",
                         raw(std::vector<std::int16_t>{1, 2, 3, 4})));
  const auto s = std::get<MatrixStack<double>>(linv::io::read_stack(stack));
  ASSERT_EQ(s.count, 2);
  EXPECT_EQ(s[1](0, 1), 4);
  const std::string big = dir.file("big.npy");
  write_bytes(big, npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
                       raw(std::vector<std::int64_t>{0, 0, -9007199254740993, 0})));
  try {
    (void)linv::io::read_matrix(big);
    ADD_FAILURE() << "-2^53 - 1 read as float64";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "int64 at index [1, 0] lies beyond +-2^53")) << e.what();
  }
}

// complex64 and complex128 matrices through read_dense in either order, written back as NumPy writes them;
// every reader of real numbers refuses them, naming the dtype, rather than read a part.
TEST(Npy, ComplexMatricesThroughReadDense) {
  const linv::testing::TempDir dir;
  using C = std::complex<double>;
  const std::vector<C> values = {{1, -2}, {3.5, 0}, {-0.25, 1e-300}, {0, 7}, {2, 2}, {-1, -1}};  // 2 x 3, row by row
  const std::string c_order = dir.file("c.npy"), f_order = dir.file("f.npy"), single = dir.file("s.npy");
  write_bytes(c_order, npy("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }", raw(values)));
  std::vector<C> transposed(6);  // column by column
  for (index i = 0; i < 2; ++i)
    for (index j = 0; j < 3; ++j) transposed[static_cast<std::size_t>(i + 2 * j)] = values[static_cast<std::size_t>(3 * i + j)];
  write_bytes(f_order, npy("{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3), }", raw(transposed)));
  std::vector<std::complex<float>> narrow(values.begin(), values.end());
  write_bytes(single, npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", raw(narrow)));
  for (const std::string& path : {c_order, f_order}) {
    const auto m = std::get<Matrix<C>>(linv::io::read_dense(path));
    ASSERT_EQ(m.rows(), 2);
    ASSERT_EQ(m.cols(), 3);
    for (index i = 0; i < 2; ++i)
      for (index j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), values[static_cast<std::size_t>(3 * i + j)]) << path;
    const std::string back = dir.file("back.npy");  // written and read again, exactly
    linv::io::write_matrix<C>(back, m.view());
    const auto again = std::get<Matrix<C>>(linv::io::read_dense(back));
    for (index k = 0; k < 6; ++k) EXPECT_EQ(again.data()[k], m.data()[k]);
    try {
      (void)linv::io::read_matrix(path);
      ADD_FAILURE() << "a complex file read as real";
    } catch (const linv::ParseError& e) {
      EXPECT_TRUE(contains(e.what(), "'<c16' holds complex numbers")) << e.what();
    }
    EXPECT_THROW((void)linv::io::read_stack(path), linv::ParseError);
    EXPECT_THROW((void)linv::io::read_matrix_columns(path, 0, 2), linv::ParseError);
  }
  const auto s = std::get<Matrix<std::complex<float>>>(linv::io::read_dense(single));
  EXPECT_EQ(s(1, 2), std::complex<float>(-1, -1));
  // real files come through read_dense in their own type
  const std::string real = dir.file("r.npy");
  linv::io::write_matrix<double>(real, Matrix<double>(2, 2).view());
  EXPECT_TRUE(std::holds_alternative<Matrix<double>>(linv::io::read_dense(real)));
}

TEST(Npy, RejectsEveryTruncation) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("t.npy");
  for (const auto& [dict, data_bytes] : {std::pair{"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }", 120},
                                         {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }", 48}}) {
    const std::string full = npy(dict, std::string(data_bytes, '\x01'));
    write_bytes(path, full);
    EXPECT_NO_THROW(linv::io::read_stack(path));
    for (std::size_t n = 0; n < full.size(); ++n) {
      SCOPED_TRACE(n);
      write_bytes(path, full.substr(0, n));
      EXPECT_THROW(linv::io::read_stack(path), linv::ParseError);
    }
  }
}

// Random corruption of the preamble and header either still reads or raises a linv error: nothing else.
TEST(Npy, SurvivesCorruptHeaders) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("c.npy");
  const std::string good =
      npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", raw(iota_values<double>(6)));
  const std::uint64_t seed = linv::testing::case_seed(4);
  LINV_TRACE_SEED(seed);
  std::mt19937_64 rng(seed);
  const char replacements[] = {'\0', '\xff', '(', ')', ',', '\'', '-', '9', ' ', '}', 'L', '\n', 'x'};
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips)
      bad[rng() % 128] = replacements[rng() % std::size(replacements)];
    write_bytes(path, bad);
    try {
      linv::io::read_stack(path);
    } catch (const linv::Error& e) {
      EXPECT_EQ(e.exit_code(), linv::ExitCode::bad_input) << e.what();
    }
  }
}

// A header may announce any size. 10^12 float64 elements (8 TB) announced by a file of a few bytes are
// refused by comparing what the header announces with what the file holds, before anything is allocated
// (an allocation of 8 TB would fail with bad_alloc, not a ParseError); from a pipe, whose size is not
// known up front, by reading the data as they arrive.
TEST(Npy, RefusesHeadersAnnouncingMoreThanTheFileHolds) {
  linv::testing::TempDir dir;
  const std::string bytes =
      npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", raw(std::vector<double>(3)));
  const std::string fault =
      fmt::format("needs 8000000000000 bytes, but 24 follow the header ({} bytes in all)", bytes.size());
  const std::string path = dir.file("huge.npy");
  write_bytes(path, bytes);
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, fault);
  expect_parse_error([&] { linv::io::read_stack(path); }, path, fault);
  expect_parse_error([&] { linv::io::read_image_channels(path); }, path, fault);

  const std::string fifo = dir.file("huge-pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  for (int reader = 0; reader < 3; ++reader) {
    SCOPED_TRACE(reader);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });  // fits in the pipe's buffer
    expect_parse_error(
        [&] {
          if (reader == 0) linv::io::read_matrix(fifo);
          if (reader == 1) linv::io::read_stack(fifo);
          if (reader == 2) linv::io::read_image_channels(fifo);
        },
        fifo, fault);
    writer.join();
  }
}

// A pipe has no size to check up front: truncated data and trailing bytes are found while reading.
TEST(Npy, ReadsFromPipes) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("pipe.npy");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  // Each payload fits in the pipe's buffer, so the writer finishes whatever the reader does.
  const auto feed = [&path](std::string bytes) {
    return std::thread([&path, bytes = std::move(bytes)] { std::ofstream(path, std::ios::binary) << bytes; });
  };
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string data = raw(iota_values<double>(6));

  std::thread writer = feed(npy(dict, data));
  const Matrix<double> A = std::get<Matrix<double>>(linv::io::read_matrix(path));
  writer.join();
  expect_same(A, Matrix<double>::from_rows({{0, 1, 2}, {3, 4, 5}}));

  writer = feed(npy(dict, data.substr(0, 40)));
  expect_parse_error([&] { linv::io::read_matrix(path); }, path, "needs 48 bytes, but 40 follow the header");
  writer.join();

  writer = feed(npy(dict, data + "xy"));
  expect_parse_error([&] { linv::io::read_stack(path); }, path, "2 extra bytes after the data");
  writer.join();
}

TEST(Npy, MissingAndUnreadableFilesAreInputErrors) {
  linv::testing::TempDir dir;
  const std::string missing = dir.file("missing.npy");
  try {
    linv::io::read_matrix(missing);
    ADD_FAILURE() << "no error";
  } catch (const linv::ParseError& e) {
    ADD_FAILURE() << "a missing file is not a parse error: " << e.what();
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), missing));
    EXPECT_TRUE(contains(e.what(), std::strerror(ENOENT)));
    EXPECT_EQ(e.exit_code(), linv::ExitCode::bad_input);
  }
  const std::string directory = dir.file("dir.npy");
  std::filesystem::create_directory(directory);
  try {
    linv::io::read_matrix(directory);
    ADD_FAILURE() << "no error";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), std::strerror(EISDIR)));
  }
}

// ---- io.cpp: formats by name, conversion, atomic writes ----

TEST(Io, RejectsUnknownExtensions) {
  linv::testing::TempDir dir;
  const Matrix<double> A(2, 2);
  for (const std::string name : {"a.csv", "a", "a.npy.txt", "a.npy:X", "a.mat:"}) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    try {
      linv::io::write_matrix<double>(path, A.view());
      ADD_FAILURE() << "no error";
    } catch (const linv::InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), path));
      if (name != "a.mat:") {
        for (const char* ext : {".npy", ".mtx", ".mat"}) EXPECT_TRUE(contains(e.what(), ext));
      }
      EXPECT_EQ(e.exit_code(), linv::ExitCode::usage);
    }
    EXPECT_THROW(linv::io::read_matrix(path), linv::InvalidArgument);
    EXPECT_THROW(linv::io::read_stack(path), linv::InvalidArgument);
  }
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

TEST(Io, ExtensionsAreCaseInsensitive) {
  linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(2, 3, linv::testing::case_seed(5));
  for (const char* name : {"A.NPY", "A.Mtx"}) {
    linv::io::write_matrix<double>(dir.file(name), A.view());
    expect_same(std::get<Matrix<double>>(linv::io::read_matrix(dir.file(name))), A);
  }
}

TEST(Io, ConvertsElementTypes) {
  const Matrix<float> f = random_matrix<float>(3, 4, linv::testing::case_seed(6));
  const Matrix<double> wide = linv::io::convert<double>(AnyMatrix(f.clone()), false);
  for (index k = 0; k < f.size(); ++k) EXPECT_EQ(wide.data()[k], static_cast<double>(f.data()[k]));

  Matrix<double> d = wide.clone();
  const double* storage = d.data();
  const Matrix<double> same = linv::io::convert<double>(AnyMatrix(std::move(d)), false);
  EXPECT_EQ(same.data(), storage) << "a matrix of the right type is moved, not copied";

  try {
    linv::io::convert<float>(AnyMatrix(wide.clone()), false);
    ADD_FAILURE() << "narrowing without permission";
  } catch (const linv::InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "holds float64 data; reading it as float32 loses precision"));
    EXPECT_TRUE(contains(e.what(), "single precision"));
  }
  const Matrix<float> narrow = linv::io::convert<float>(AnyMatrix(wide.clone()), true);
  expect_same(narrow, f);
  const Matrix<float> kept = linv::io::convert<float>(AnyMatrix(f.clone()), false);
  expect_same(kept, f);

  EXPECT_STREQ(linv::io::to_string(linv::io::DType::Float32), "float32");
  EXPECT_STREQ(linv::io::to_string(linv::io::DType::Float64), "float64");
}

TEST(Io, WritesTextAtomically) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("report.json");
  linv::io::write_text(path, "first\n");
  EXPECT_EQ(read_bytes(path), "first\n");
  linv::io::write_text(path, "second");
  EXPECT_EQ(read_bytes(path), "second");
  linv::io::write_text(path, "");
  EXPECT_EQ(read_bytes(path), "");
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"report.json"});
}

// Outputs written as one: nothing is renamed into place before commit(); a transaction ended without it
// removes what it holds, and the targets keep their earlier content.
TEST(Io, OutputTransactionRenamesTogetherOrNotAtAll) {
  linv::testing::TempDir dir;
  const std::string first = dir.file("first.txt"), second = dir.file("second.npy");
  linv::io::write_text(first, "before");
  const Matrix<double> A = random_matrix<double>(3, 2, linv::testing::case_seed(8));
  {
    linv::io::OutputTransaction outputs;
    linv::io::write_text(first, "after");
    linv::io::write_matrix<double>(second, A.view());
    EXPECT_EQ(read_bytes(first), "before");  // written, not yet in place
    EXPECT_FALSE(std::filesystem::exists(second));
    EXPECT_THROW(linv::io::OutputTransaction(), linv::InvalidArgument);  // no nesting
  }  // no commit: abandoned
  EXPECT_EQ(read_bytes(first), "before");
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"first.txt"});
  {
    linv::io::OutputTransaction outputs;
    linv::io::write_text(first, "after");
    linv::io::write_matrix<double>(second, A.view());
    outputs.commit();
  }
  EXPECT_EQ(read_bytes(first), "after");
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(second)), A);
  std::vector<std::string> names = dir_entries(dir.path());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"first.txt", "second.npy"}));
  linv::io::write_text(first, "alone");  // no transaction open: written in place at once
  EXPECT_EQ(read_bytes(first), "alone");
}

TEST(Io, FailedWritesLeaveNoTrace) {
  linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(4, 4, linv::testing::case_seed(7));
  // Into a directory that does not exist.
  for (const char* name : {"a.npy", "a.mtx", "a.txt"}) {
    const std::string path = dir.file(std::string("nowhere/") + name);
    try {
      if (std::string(name) == "a.txt")
        linv::io::write_text(path, "x");
      else
        linv::io::write_matrix<double>(path, A.view());
      ADD_FAILURE() << "no error for " << path;
    } catch (const linv::InputError& e) {
      EXPECT_TRUE(contains(e.what(), "could not write " + path));
      EXPECT_TRUE(contains(e.what(), std::strerror(ENOENT)));
    }
  }
  EXPECT_TRUE(dir_entries(dir.path()).empty());

  // Over a directory: the rename fails after the data was written; the directory and what it holds stay.
  const std::string target = dir.file("out.npy");
  std::filesystem::create_directory(target);
  write_bytes(target + "/keep", "kept");
  EXPECT_THROW(linv::io::write_matrix<double>(target, A.view()), linv::InputError);
  EXPECT_TRUE(std::filesystem::is_directory(target));
  EXPECT_EQ(read_bytes(target + "/keep"), "kept");
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"out.npy"});
}

// A write that fails halfway (the file-size limit stops it) must leave the old target as it was.
TEST(Io, WriteFailingMidwayKeepsTheOldTarget) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("old.npy");
  const Matrix<double> old = random_matrix<double>(3, 3, linv::testing::case_seed(8));
  linv::io::write_matrix<double>(path, old.view());
  const std::string before = read_bytes(path);

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  struct sigaction ignore = {}, previous = {};
  ignore.sa_handler = SIG_IGN;  // exceeding the limit raises SIGXFSZ; the write then fails with EFBIG
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const Matrix<double> big = random_matrix<double>(64, 64, linv::testing::case_seed(9));
  std::optional<std::string> error;
  try {
    linv::io::write_matrix<double>(path, big.view());
  } catch (const linv::InputError& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &previous, nullptr);

  ASSERT_TRUE(error.has_value()) << "the write should have failed";
  EXPECT_TRUE(contains(*error, "could not write " + path));
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"old.npy"});
}

TEST(Io, ValidatesStacksBeforeWriting) {
  linv::testing::TempDir dir;
  MatrixStack<double> bad{2, 3, 3, std::vector<double>(17)};
  EXPECT_THROW(linv::io::write_stack(dir.file("s.npy"), bad), linv::InvalidArgument);
  MatrixStack<double> two{2, 1, 1, {1.0, 2.0}};
  EXPECT_THROW(linv::io::write_stack(dir.file("s.mtx"), two), linv::InvalidArgument);
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

}  // namespace
