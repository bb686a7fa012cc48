// Tests of the .npz reader: archives written by linv, and archives built byte by byte here the way
// numpy.savez and savez_compressed write them (stored or deflated members, ZIP64 extra fields), then
// corrupted. Without zlib the reader is absent and the tests skip.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "linv/errors.hpp"
#include "linv/io.hpp"
#include "support/files.hpp"
#include "support/testing.hpp"

namespace {

using linv::Matrix;
using namespace linv::testing;

#define REQUIRE_NPZ()                                                             \
  if (!linv::io::have_npz_support()) GTEST_SKIP() << "linv was built without zlib: no .npz"

void put(std::string& s, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
}

std::string deflated(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Entry {
  std::string name, data;
  bool deflate = false;
  bool zip64 = false;  // as numpy writes: sizes 0xFFFFFFFF in the local header, a ZIP64 extra field in both
};

// A zip archive of these members (no data descriptors, no comment).
std::string zip(const std::vector<Entry>& entries) {
  std::string body, directory;
  for (const Entry& e : entries) {
    const std::string packed = e.deflate ? deflated(e.data) : e.data;
    const std::uint32_t crc =
        static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    std::string extra;
    if (e.zip64) put(extra, 1, 2), put(extra, 16, 2), put(extra, e.data.size(), 8), put(extra, packed.size(), 8);
    const std::uint64_t small_size = e.zip64 ? 0xFFFFFFFF : e.data.size(),
                        small_packed = e.zip64 ? 0xFFFFFFFF : packed.size();
    auto common = [&](std::string& h) {
      put(h, 20, 2), put(h, 0, 2), put(h, e.deflate ? 8 : 0, 2), put(h, 0, 2), put(h, 0x21, 2);
      put(h, crc, 4), put(h, small_packed, 4), put(h, small_size, 4), put(h, e.name.size(), 2), put(h, extra.size(), 2);
    };
    const std::size_t offset = body.size();
    put(body, 0x04034b50, 4);
    common(body);
    body += e.name + extra + packed;
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);
    common(directory);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += e.name + extra;
  }
  std::string out = body + directory;
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, entries.size(), 2), put(out, entries.size(), 2);
  put(out, directory.size(), 4), put(out, body.size(), 4), put(out, 0, 2);
  return out;
}

// The bytes of a .npy file holding A, as linv writes it.
std::string npy_bytes(const Matrix<double>& A, const linv::testing::TempDir& dir) {
  const std::string path = dir.file("member.npy");
  linv::io::write_matrix<double>(path, A.view());
  return read_bytes(path);
}

TEST(Npz, ReadsWhatLinvWrites) {
  REQUIRE_NPZ();
  const linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(4, 3, 1), B = random_matrix<double>(2, 5, 2);
  const std::string one = dir.file("one.npz");
  linv::io::write_matrix<double>(one + ":X", A.view());
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(one)), A);  // the only member, unnamed
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(one + ":X")), A);
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(one + ":X.npy")), A);
  const std::string positional = dir.file("positional.npz");
  linv::io::write_matrix<double>(positional, A.view());  // named as numpy.savez names a positional array
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(positional + ":arr_0")), A);

  const std::string two = dir.file("two.npz");
  linv::io::write_npz<double>(two, {{"A", A.view()}, {"B", B.view()}});
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(two + ":B")), B);
  expect_same(std::get<Matrix<double>>(linv::io::read_matrix(two + ":A")), A);
  try {
    (void)linv::io::read_matrix(two);
    ADD_FAILURE() << "an archive of two arrays read without a name";
  } catch (const linv::ParseError& e) {  // exit 3, as for a .mat file of several variables
    EXPECT_TRUE(contains(e.what(), "holds 2 arrays (A, B)")) << e.what();
  }
  try {
    (void)linv::io::read_matrix(two + ":C");
    ADD_FAILURE() << "a missing array read";
  } catch (const linv::ParseError& e) {  // exit 3, as a .mat file without the variable
    EXPECT_TRUE(contains(e.what(), "no array 'C'; it holds A, B")) << e.what();
  }
  EXPECT_THROW(linv::io::write_stack<double>(dir.file("s.npz"), linv::io::MatrixStack<double>{1, 4, 3, {}}),
               linv::InvalidArgument);
}

TEST(Npz, ReadsStoredAndDeflatedMembersWithZip64Fields) {
  REQUIRE_NPZ();
  const linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(6, 7, 3), B = random_matrix<double>(3, 3, 4);
  const std::string a = npy_bytes(A, dir), b = npy_bytes(B, dir);
  for (bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64 ? "ZIP64 extra fields" : "plain sizes");
    const std::string path = dir.file("built.npz");
    write_bytes(path, zip({{"A.npy", a, /*deflate=*/true, zip64}, {"B.npy", b, /*deflate=*/false, zip64}}));
    expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path + ":A")), A);
    expect_same(std::get<Matrix<double>>(linv::io::read_matrix(path + ":B")), B);
    const auto stack = std::get<linv::io::MatrixStack<double>>(linv::io::read_stack(path + ":A"));
    EXPECT_EQ(stack.count, 1);
    EXPECT_EQ(stack.rows, 6);
  }
}

TEST(Npz, RefusesCorruptArchives) {
  REQUIRE_NPZ();
  const linv::testing::TempDir dir;
  const Matrix<double> A = random_matrix<double>(5, 5, 5);
  const std::string member = npy_bytes(A, dir), path = dir.file("bad.npz");
  const std::string good = zip({{"A.npy", member, /*deflate=*/true}});

  std::string flipped = good;
  flipped[40] = static_cast<char>(flipped[40] ^ 0x5a);  // inside the deflated data
  write_bytes(path, flipped);
  EXPECT_THROW((void)linv::io::read_matrix(path + ":A"), linv::ParseError);

  Entry stored{"A.npy", member};
  std::string bad_crc = zip({stored});
  bad_crc[14] = static_cast<char>(bad_crc[14] ^ 1);  // the local header's CRC is not read; the directory's is
  bad_crc[bad_crc.size() - 22 - 46 - 5 + 16] ^= 1;
  write_bytes(path, bad_crc);
  linv::testing::expect_parse_error([&] { (void)linv::io::read_matrix(path); }, path, "CRC-32");

  std::string method = zip({stored});
  method[method.size() - 22 - 46 - 5 + 10] = 12;  // bzip2
  write_bytes(path, method);
  linv::testing::expect_parse_error([&] { (void)linv::io::read_matrix(path); }, path, "compression method 12");

  std::string encrypted = zip({stored});
  encrypted[encrypted.size() - 22 - 46 - 5 + 8] = 1;
  write_bytes(path, encrypted);
  EXPECT_THROW((void)linv::io::read_matrix(path), linv::InputError);

  // Every truncation fails with a linv error, never a crash or a wrong matrix.
  for (std::size_t length = 0; length < good.size(); ++length) {
    write_bytes(path, good.substr(0, length));
    EXPECT_THROW((void)linv::io::read_matrix(path), linv::Error) << "truncated to " << length << " bytes";
  }
  // A faulty member is reported within the member, under the archive's name.
  write_bytes(path, zip({{"A.npy", member.substr(0, 20)}}));
  try {
    (void)linv::io::read_matrix(path);
    ADD_FAILURE() << "a truncated member read";
  } catch (const linv::ParseError& e) {
    EXPECT_EQ(e.file(), path + ":A.npy");
  }
}

}  // namespace
