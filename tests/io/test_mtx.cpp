// Tests of the Matrix Market reader and writer: round trips, every layout/field/symmetry combination linv
// reads, and the line-numbered errors for malformed files.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/io.hpp"
#include "support/files.hpp"
#include "support/round_trip.hpp"
#include "support/testing.hpp"

namespace {

using linv::index;
using namespace linv::testing;
using linv::Matrix;
using linv::SparseMatrix;
using linv::io::AnyMatrix;

// Reads `text` as a .mtx file.
Matrix<double> parse(const linv::testing::TempDir& dir, const std::string& text) {
  const std::string path = dir.file("m.mtx");
  write_bytes(path, text);
  AnyMatrix m = linv::io::read_matrix(path);
  EXPECT_TRUE(std::holds_alternative<Matrix<double>>(m)) << "Matrix Market reads as float64";
  Matrix<double> dense = std::get<Matrix<double>>(std::move(m));
  // The same file read as compressed rows holds the same matrix, each row's columns ascending and distinct.
  const SparseMatrix<double> sparse = std::get<SparseMatrix<double>>(linv::io::read_sparse(path));
  expect_same(sparse.to_dense(), dense);
  EXPECT_EQ(sparse.row_start.size(), static_cast<std::size_t>(sparse.rows + 1));
  for (index r = 0; r < sparse.rows; ++r)
    for (index k = sparse.row_start[r] + 1; k < sparse.row_start[r + 1]; ++k)
      EXPECT_LT(sparse.column[k - 1], sparse.column[k]) << "row " << r;
  return dense;
}

template <class T>
class MtxTyped : public ::testing::Test {};
TYPED_TEST_SUITE(MtxTyped, RealTypes);

// Values survive exactly: %.17g for float64 and %.9g for float32 are enough digits to read back the same value.
TYPED_TEST(MtxTyped, RoundTripsMatrices) {
  using T = TypeParam;
  round_trip_shapes<T>("a.mtx", 300, [](const std::string& path, const Matrix<T>& A) {
    expect_same(linv::io::convert<T>(linv::io::read_matrix(path), true), A);
  });
}

TYPED_TEST(MtxTyped, RoundTripsExtremeValues) {
  using T = TypeParam;
  linv::testing::TempDir dir;
  using lim = std::numeric_limits<T>;
  Matrix<T> A = Matrix<T>::from_rows({{lim::max(), lim::lowest(), lim::min(), lim::denorm_min()},
                                      {lim::epsilon(), T(-0.0), lim::infinity(), -lim::infinity()},
                                      {lim::quiet_NaN(), T(1) / T(3), T(-1e-30), T(123456789)}});
  const std::string path = dir.file("x.mtx");
  linv::io::write_matrix<T>(path, A.view());
  expect_same(linv::io::convert<T>(linv::io::read_matrix(path), true), A);
}

TEST(Mtx, WritesMostlyZeroMatricesAsCoordinates) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("s.mtx");
  Matrix<double> A(4, 3);
  A(0, 0) = 1.5;
  A(3, 1) = -2;
  A(2, 2) = -0.0;  // stored: it reads back with its sign
  linv::io::write_matrix<double>(path, A.view());
  EXPECT_EQ(read_bytes(path), "%%MatrixMarket matrix coordinate real general\n4 3 3\n1 1 1.5\n4 2 -2\n3 3 -0\n");
  const Matrix<double> back = linv::io::convert<double>(linv::io::read_matrix(path), true);
  expect_same(back, A);
}

TEST(Mtx, WritesArrayRealGeneral) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("w.mtx");
  const Matrix<double> A = Matrix<double>::from_rows({{1, 2.5}, {-3, 0.1}});
  linv::io::write_matrix<double>(path, A.view());
  EXPECT_EQ(read_bytes(path), "%%MatrixMarket matrix array real general\n2 2\n1\n-3\n2.5\n0.10000000000000001\n");
  const Matrix<float> F = Matrix<float>::from_rows({{0.1f}});
  linv::io::write_matrix<float>(path, F.view());
  EXPECT_EQ(read_bytes(path), "%%MatrixMarket matrix array real general\n1 1\n0.100000001\n");
  // A strided view is written by its elements, not its storage.
  const Matrix<double> big = Matrix<double>::from_rows({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  linv::io::write_matrix<double>(path, big.block(1, 1, 2, 2));
  EXPECT_EQ(read_bytes(path), "%%MatrixMarket matrix array real general\n2 2\n5\n8\n6\n9\n");
}

TEST(Mtx, ReadsArrayFormats) {
  linv::testing::TempDir dir;
  // General: column-major.
  expect_same(parse(dir, "%%MatrixMarket matrix array real general\n2 3\n1\n4\n2\n5\n3\n6\n"),
              Matrix<double>::from_rows({{1, 2, 3}, {4, 5, 6}}));
  // Symmetric: the lower triangle, column by column.
  expect_same(parse(dir, "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n"),
              Matrix<double>::from_rows({{1, 2, 3}, {2, 4, 5}, {3, 5, 6}}));
  // Skew-symmetric: below the diagonal only; the diagonal is zero.
  expect_same(parse(dir, "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"),
              Matrix<double>::from_rows({{0, -1, -2}, {1, 0, -3}, {2, 3, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix array integer general\n1 2\n7\n-8\n"),
              Matrix<double>::from_rows({{7, -8}}));
  expect_same(parse(dir, "%%MatrixMarket matrix array real general\n0 0\n"), Matrix<double>(0, 0));
  expect_same(parse(dir, "%%MatrixMarket matrix array real general\n3 0\n"), Matrix<double>(3, 0));
  expect_same(parse(dir, "%%MatrixMarket matrix array real skew-symmetric\n1 1\n"), Matrix<double>(1, 1));
}

TEST(Mtx, ReadsCoordinateFormats) {
  linv::testing::TempDir dir;
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1.5\n2 3 -2\n1 2 4e1\n"),
              Matrix<double>::from_rows({{1.5, 40, 0}, {0, 0, -2}}));
  // Duplicates are summed.
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 1\n1 2 2.5\n2 1 1\n"),
              Matrix<double>::from_rows({{0, 3.5}, {1, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n3 1 2\n3 2 5\n"),
              Matrix<double>::from_rows({{1, 0, 2}, {0, 0, 5}, {2, 5, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 1 2\n3 3 0\n"),
              Matrix<double>::from_rows({{0, -1, -2}, {1, 0, 0}, {2, 0, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n2 1\n2 1\n"),
              Matrix<double>::from_rows({{1, 0}, {2, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n"),
              Matrix<double>::from_rows({{1, 1}, {1, 0}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n2 2 -4\n"),
              Matrix<double>::from_rows({{3, 0}, {0, -4}}));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\n2 2 0\n"), Matrix<double>(2, 2));
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\n0 0 0\n"), Matrix<double>(0, 0));
}

TEST(Mtx, ToleratesCaseCommentsBlankLinesAndCrlf) {
  linv::testing::TempDir dir;
  const Matrix<double> want = Matrix<double>::from_rows({{1, 0}, {0, 2.5}});
  expect_same(parse(dir,
                    "%%matrixmarket MATRIX Coordinate REAL General\n% a comment\n%\n\n  2 2 2\n\n"
                    "1 1 1\n\n2 2 +2.5\n\n"),
              want);
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\r\n2 2 2\r\n1 1 1\r\n2 2 2.5\r\n"), want);
  expect_same(parse(dir, "%%MatrixMarket matrix coordinate real general\n2\t2  2\n 1 1\t1.0 \n2 2 2.5"), want);
}

struct Malformed {
  const char* name;
  std::string text;
  const char* fault;
  std::int64_t line;
};

TEST(Mtx, RejectsMalformedFiles) {
  linv::testing::TempDir dir;
  const std::string coord = "%%MatrixMarket matrix coordinate real general\n";
  const std::string array = "%%MatrixMarket matrix array real general\n";
  const Malformed cases[] = {
      {"empty", "", "empty", 1},
      {"no banner", "2 2\n1\n2\n3\n4\n", "not a Matrix Market file", 1},
      {"short banner", "%%MatrixMarket matrix array real\n1 1\n1\n", "malformed banner", 1},
      {"vector", "%%MatrixMarket vector array real general\n1\n", "object 'vector' is not supported", 1},
      {"unknown format", "%%MatrixMarket matrix dense real general\n1 1\n1\n", "unknown Matrix Market format 'dense'",
       1},
      {"complex where real numbers are read", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
       "a complex matrix, where real numbers are read", 1},
      {"real hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
       "a hermitian matrix needs the complex field, not 'real'", 1},
      {"unknown field", "%%MatrixMarket matrix array quaternion general\n1 1\n1\n", "unknown Matrix Market field", 1},
      {"unknown symmetry", "%%MatrixMarket matrix array real diagonal\n1 1\n1\n", "unknown Matrix Market symmetry", 1},
      {"pattern array", "%%MatrixMarket matrix array pattern general\n1 1\n1\n", "pattern field needs the coordinate",
       1},
      {"no size line", coord + "% only comments\n\n", "ends before the size line", 3},
      {"size line too short", coord + "% c\n2 2\n", "malformed size line '2 2'", 3},
      {"size line too long", array + "2 2 4\n", "expected 'rows columns'", 2},
      {"negative size", array + "-2 2\n", "malformed size line", 2},
      {"non-numeric size", coord + "2 x 1\n", "malformed size line", 2},
      {"non-square symmetric", "%%MatrixMarket matrix array real symmetric\n2 3\n",
       "must be square, the size line says 2x3", 2},
      {"too few array entries", array + "2 2\n1\n2\n3\n",
       "the file ends before the last of the 4 entries declared by the size line (line 2)", 5},
      {"too few coordinate entries", coord + "3 3 4\n1 1 1\n2 2 1\n", "ends before the last of the 4 entries", 4},
      {"comment among the entries", array + "2 1\n1\n% c\n2\n", "comments may only come before the size line", 4},
      {"too many array entries", array + "1 2\n1\n2\n3\n", "more entries than the 2 declared by the size line (line 2)",
       5},
      {"NUL byte", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1" + std::string(1, '\0') + "\n1 3\n",
       "a NUL byte", -1},
      {"entries in an array of no rows", array + "0 2\n1\n", "more entries than the 0 declared", 3},
      {"too many coordinate entries", coord + "2 2 1\n1 1 1\n\n2 2 1\n", "more entries than the 1 declared", 5},
      {"two values on a line", array + "2 1\n1 2\n", "expected 'one value' as numbers (indices integers), found '1 2'", 3},
      {"missing value", coord + "2 2 1\n1 1\n", "expected 'row column value' as numbers (indices integers), found '1 1'", 3},
      {"row 0", coord + "2 2 1\n0 1 1\n", "row index out of range 1..2 in '0 1 1'", 3},
      {"row too large", coord + "2 3 2\n1 1 1\n3 1 1\n", "row index out of range 1..2 in '3 1 1'", 4},
      {"column too large", coord + "2 3 1\n1 4 1\n", "column index out of range 1..3 in '1 4 1'", 3},
      {"index not an integer", coord + "2 2 1\n1.0 1 1\n", "found '1.0 1 1'", 3},
      {"non-numeric value", coord + "2 2 1\n1 1 abc\n", "found '1 1 abc'", 3},
      {"non-numeric array value", array + "1 2\n1\n1,5\n", "found '1,5'", 4},
      {"value out of range", array + "1 1\n1e999\n", "outside the range of float64 in '1e999'", 3},
      {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 1\n2 2 3\n",
       "zero diagonal, but entry (2, 2) is 3", 4},
      {"absurd array size", array + "100000000 100000000\n1\n", "too short to hold its entries", 2},
      {"absurd entry count", coord + "10 10 1000000000000\n1 1 1\n",
       "declares 1000000000000 entries, but the file (72 bytes) is too short to hold them", 2},
      {"overflowing size", coord + "9223372036854775807 9223372036854775807 0\n", "too large to hold densely", 2},
      {"larger than memory", coord + "1000000 1000000 0\n", "more than this machine's", 2},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(std::string(c.name) + ".mtx");
    write_bytes(path, c.text);
    const auto e = expect_parse_error([&] { linv::io::read_matrix(path); }, path, c.fault);
    if (e) {
      EXPECT_EQ(e->line(), c.line) << e->what();
      if (c.line > 0) {
        EXPECT_TRUE(contains(e->what(), path + ":" + std::to_string(c.line) + ": ")) << "the message names the line";
      } else {
        EXPECT_GT(e->offset(), 0) << "the message names the byte instead";
      }
    }
  }
}

// Complex fields, read by read_dense as complex128: every layout and symmetry, repeated coordinates summed as
// the real reader sums them, round trips of complex64 and complex128 (every bit, -0 parts and extreme
// magnitudes included), and the faults named by line as for real files.
TEST(Mtx, ComplexFieldsThroughReadDense) {
  using C = std::complex<double>;
  linv::testing::TempDir dir;
  const auto dense = [&](const std::string& text) {
    const std::string path = dir.file("c.mtx");
    write_bytes(path, text);
    return std::get<Matrix<C>>(linv::io::read_dense(path));
  };
  const auto expect_matrix = [](const Matrix<C>& m, const std::vector<std::vector<C>>& rows) {
    ASSERT_EQ(m.rows(), static_cast<index>(rows.size()));
    for (index i = 0; i < m.rows(); ++i)
      for (index j = 0; j < m.cols(); ++j)
        EXPECT_EQ(m(i, j), rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) << i << "," << j;
  };
  expect_matrix(dense("%%MatrixMarket matrix array complex general\n2 2\n1 -2\n3 0.5\n+4 -0\n5e-300 6\n"),
                {{C(1, -2), C(4, -0.0)}, {C(3, 0.5), C(5e-300, 6)}});
  expect_matrix(dense("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n"),
                {{C(1, 0), C(2, -3)}, {C(2, 3), C(4, 0)}});
  expect_matrix(dense("%%MatrixMarket matrix array complex symmetric\n2 2\n1 1\n2 3\n4 0\n"),
                {{C(1, 1), C(2, 3)}, {C(2, 3), C(4, 0)}});
  expect_matrix(dense("%%MatrixMarket matrix array complex skew-symmetric\n2 2\n2 3\n"),
                {{C(0, 0), C(-2, -3)}, {C(2, 3), C(0, 0)}});
  expect_matrix(dense("%%MatrixMarket matrix coordinate complex general\n2 3 3\n1 3 1 1\n2 1 0 -1\n1 3 2 0.5\n"),
                {{C(0, 0), C(0, 0), C(3, 1.5)}, {C(0, -1), C(0, 0), C(0, 0)}});
  // (a hermitian diagonal's imaginary part, rounding left by a writer, is kept as given)
  expect_matrix(dense("%%MatrixMarket matrix coordinate complex hermitian\n3 3 2\n3 1 1 2\n2 2 5 1e-17\n"),
                {{C(0, 0), C(0, 0), C(1, -2)}, {C(0, 0), C(5, 1e-17), C(0, 0)}, {C(1, 2), C(0, 0), C(0, 0)}});
  // a real file comes through read_dense as float64
  write_bytes(dir.file("r.mtx"), "%%MatrixMarket matrix array real general\n1 1\n2\n");
  EXPECT_TRUE(std::holds_alternative<Matrix<double>>(linv::io::read_dense(dir.file("r.mtx"))));

  std::mt19937_64 g(case_seed(46));
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& [rows, cols, sparse] : {std::tuple{0, 3, false}, {1, 1, false}, {7, 5, false}, {40, 30, true}}) {
    Matrix<C> a(rows, cols);
    for (index j = 0; j < cols; ++j)
      for (index i = 0; i < rows; ++i)
        if (!sparse || (i + j) % 5 == 0) a(i, j) = C(u(g) * std::pow(2.0, 900 * u(g)), u(g));
    if (rows * cols > 2) a(0, 1) = C(-0.0, std::numeric_limits<double>::denorm_min());
    const std::string path = dir.file("rt.mtx");
    linv::io::write_matrix<C>(path, a.view());
    const auto back = std::get<Matrix<C>>(linv::io::read_dense(path));
    ASSERT_EQ(back.rows(), rows);
    ASSERT_EQ(back.cols(), cols);
    for (index k = 0; k < rows * cols; ++k) {
      EXPECT_EQ(std::memcmp(&back.data()[k], &a.data()[k], sizeof(C)), 0) << k << " in " << rows << "x" << cols;
    }
    Matrix<std::complex<float>> narrow(rows, cols);
    for (index k = 0; k < rows * cols; ++k) narrow.data()[k] = std::complex<float>(static_cast<float>(u(g)), -1.5f);
    linv::io::write_matrix<std::complex<float>>(path, narrow.view());
    const auto wide = std::get<Matrix<C>>(linv::io::read_dense(path));  // 9 digits: float's value once rounded
    for (index k = 0; k < rows * cols; ++k) EXPECT_EQ(std::complex<float>(wide.data()[k]), narrow.data()[k]);
  }

  const struct {
    const char* name;
    std::string text;
    const char* fault;
    std::int64_t line;
  } faults[] = {
      {"missing imaginary part", "%%MatrixMarket matrix array complex general\n1 2\n1 2\n3\n",
       "expected 'real imaginary' as numbers (indices integers), found '3'", 4},
      {"coordinate without its imaginary part", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1\n",
       "expected 'row column real imaginary'", 3},
      {"three parts", "%%MatrixMarket matrix array complex general\n1 1\n1 2 3\n", "found '1 2 3'", 3},
      {"skew diagonal", "%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 2 0 0.5\n",
       "a skew-symmetric matrix has a zero diagonal, but entry (2, 2) is 0+0.5i", 3},
      {"non-square hermitian", "%%MatrixMarket matrix array complex hermitian\n2 3\n", "a hermitian matrix must be square",
       2},
  };
  for (const auto& f : faults) {
    SCOPED_TRACE(f.name);
    const std::string path = dir.file("bad.mtx");
    write_bytes(path, f.text);
    const auto e = expect_parse_error([&] { (void)linv::io::read_dense(path); }, path, f.fault);
    if (e) {
      EXPECT_EQ(e->line(), f.line) << e->what();
    }
  }
  // the real readers refuse a complex file, saying where it is read
  write_bytes(dir.file("c.mtx"), "%%MatrixMarket matrix array complex general\n1 1\n1 1\n");
  for (const auto& read : {std::function<void()>([&] { (void)linv::io::read_matrix(dir.file("c.mtx")); }),
                           std::function<void()>([&] { (void)linv::io::read_sparse(dir.file("c.mtx")); }),
                           std::function<void()>([&] { (void)linv::io::read_stack(dir.file("c.mtx")); })})
    expect_parse_error(read, dir.file("c.mtx"), "inv, solve, lstsq");
}

TEST(Mtx, MissingFileIsAnInputError) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("missing.mtx");
  try {
    linv::io::read_matrix(path);
    ADD_FAILURE() << "no error";
  } catch (const linv::ParseError& e) {
    ADD_FAILURE() << "a missing file is not a parse error: " << e.what();
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), path));
    EXPECT_TRUE(contains(e.what(), std::strerror(ENOENT)));
  }
}

TEST(Mtx, ReadsAndWritesStacksOfOne) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("s.mtx");
  write_bytes(path, "%%MatrixMarket matrix array real general\n2 1\n1\n2\n");
  const auto s = std::get<linv::io::MatrixStack<double>>(linv::io::read_stack(path));
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.cols, 1);
  EXPECT_EQ(s.data, (std::vector<double>{1, 2}));
  linv::io::write_stack(dir.file("t.mtx"), s);
  EXPECT_EQ(read_bytes(dir.file("t.mtx")), read_bytes(path));
}

TEST(SparseMatrix, FromTripletsSortsByRowAndColumnAndSumsRepeats) {
  std::mt19937_64 rng(linv::testing::case_seed(__LINE__));
  const index rows = 37, cols = 23;
  std::uniform_int_distribution<index> row(0, rows - 1), col(0, cols - 1);
  std::normal_distribution<double> value;
  std::vector<index> r, c;
  std::vector<double> v;
  Matrix<double> want(rows, cols);
  for (int k = 0; k < 400; ++k) {  // about half the places, many of them twice
    r.push_back(row(rng));
    c.push_back(col(rng));
    v.push_back(value(rng));
    want(r.back(), c.back()) += v.back();
  }
  const SparseMatrix<double> s = SparseMatrix<double>::from_triplets(rows, cols, r, c, v);
  EXPECT_LT(s.nonzeros(), 400);
  for (index i = 0; i < rows; ++i)
    for (index k = s.row_start[i] + 1; k < s.row_start[i + 1]; ++k) EXPECT_LT(s.column[k - 1], s.column[k]);
  // Sums are formed in the order given, as the dense reference adds them.
  expect_same(s.to_dense(), want);
  expect_same(SparseMatrix<double>::from_dense(want.view()).to_dense(), want);
  EXPECT_THROW(SparseMatrix<double>::from_triplets(2, 2, {0, 2}, {0, 0}, {1.0, 1.0}), linv::InvalidArgument);
}

// J^T in compressed rows, formed over several threads (blocks of 16384 rows each): the same as the dense
// transpose's nonzeros, every row's columns ascending.
TEST(SparseMatrix, TransposeOverThreadsIsTheTranspose) {
  const int threads_before = linv::cpu_threads();
  linv::set_cpu_threads(3);
  std::mt19937_64 rng(linv::testing::case_seed(__LINE__));
  const index rows = 70000, cols = 40;
  std::uniform_int_distribution<index> col(0, cols - 1);
  std::vector<index> r, c;
  std::vector<double> v;
  for (index i = 0; i < rows; ++i)
    for (int k = 0; k < 3; ++k) {
      r.push_back(i);
      c.push_back(col(rng));
      v.push_back(static_cast<double>(i * 3 + k + 1));  // none zero, as from_dense would drop it
    }
  const SparseMatrix<double> A = SparseMatrix<double>::from_triplets(rows, cols, r, c, v);
  const SparseMatrix<double> t = A.transpose();
  linv::set_cpu_threads(threads_before);
  const Matrix<double> dense = A.to_dense();
  Matrix<double> want(cols, rows);
  for (index i = 0; i < rows; ++i)
    for (index j = 0; j < cols; ++j) want(j, i) = dense(i, j);
  const SparseMatrix<double> expected = SparseMatrix<double>::from_dense(want.view());
  EXPECT_EQ(t.row_start, expected.row_start);
  EXPECT_EQ(t.column, expected.column);
  EXPECT_EQ(t.value, expected.value);
}

// A file of many 2 MiB chunks, read on two threads: every entry lands where it belongs, and a fault deep in
// the file is reported at its own line.
TEST(Mtx, ReadsLargeFilesInParallelChunksAndNamesTheLineOfAFault) {
  linv::testing::TempDir dir;
  const int threads_before = linv::cpu_threads();
  linv::set_cpu_threads(2);
  std::mt19937_64 rng(linv::testing::case_seed(__LINE__));
  const index rows = 50000, cols = 3000, entries = 300000;
  std::uniform_int_distribution<index> row(0, rows - 1), col(0, cols - 1);
  std::normal_distribution<double> value;
  std::vector<index> r, c;
  std::vector<double> v;
  std::string text = fmt::format("%%MatrixMarket matrix coordinate real general\n{} {} {}\n", rows, cols, entries);
  for (index k = 0; k < entries; ++k) {
    r.push_back(row(rng));
    c.push_back(col(rng));
    v.push_back(value(rng));
    text += fmt::format("{} {} {:.17g}\n", r.back() + 1, c.back() + 1, v.back());
  }
  ASSERT_GT(text.size(), 3u << 21) << "several chunks";
  const std::string path = dir.file("big.mtx");
  write_bytes(path, text);
  const auto got = std::get<SparseMatrix<double>>(linv::io::read_sparse(path));
  const auto want = SparseMatrix<double>::from_triplets(rows, cols, r, c, v);
  EXPECT_EQ(got.row_start, want.row_start);
  EXPECT_EQ(got.column, want.column);
  EXPECT_EQ(got.value, want.value);

  // entry 250000 (line 250002) made malformed
  std::size_t at = 0;
  for (int line = 1; line < 250002; ++line) at = text.find('\n', at) + 1;
  text.insert(text.find(' ', at), "x");
  write_bytes(path, text);
  const auto e = expect_parse_error([&] { linv::io::read_sparse(path); }, path, "as numbers");
  if (e) {
    EXPECT_EQ(e->line(), 250002);
  }
  linv::set_cpu_threads(threads_before);
}

TEST(Mtx, WritesSparseMatricesAsCoordinatesWhateverTheirDensity) {
  linv::testing::TempDir dir;
  const Matrix<double> A = Matrix<double>::from_rows({{1, 2}, {0, -0.5}});
  const SparseMatrix<double> S = SparseMatrix<double>::from_dense(A.view());
  const std::string path = dir.file("s.mtx");
  linv::io::write_sparse(path, S);
  EXPECT_EQ(read_bytes(path), "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 2 2\n2 2 -0.5\n");
  expect_same(std::get<SparseMatrix<double>>(linv::io::read_sparse(path)).to_dense(), A);
  // formats without sparse matrices hold it dense
  linv::io::write_sparse(dir.file("s.npy"), S);
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(dir.file("s.npy"))), A);
  expect_same(std::get<SparseMatrix<double>>(linv::io::read_sparse(dir.file("s.npy"))).to_dense(), A);
}

TEST(Mtx, RefusesSparseMatricesLargerThanMemoryBeforeAllocating) {
  linv::testing::TempDir dir;
  const std::string path = dir.file("huge.mtx");
  write_bytes(path, "%%MatrixMarket matrix coordinate real general\n1000000000000 1 0\n");
  const auto e = expect_parse_error([&] { linv::io::read_sparse(path); }, path, "sparse 1000000000000x1 matrix needs");
  if (e) {
    EXPECT_EQ(e->line(), 2);
  }
}

}  // namespace
