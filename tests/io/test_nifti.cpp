// NIfTI fMRI images: round trips of float and double volumes through a mask (values, voxel order, grid and
// space), plain and gzip, integer data with scl_slope/scl_inter written by nifti2_io itself, 3-D images,
// NIfTI-2 for long axes, and the refusals: masks on another grid, missing, malformed and truncated files,
// non-finite voxels, failed writes leaving the target alone. Without libnifti2: the error that says so.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linv/errors.hpp"
#include "linv/io.hpp"
#include "support/files.hpp"
#include "support/testing.hpp"

#ifdef LINV_HAVE_NIFTI
#include <nifti2_io.h>
#endif

namespace {

using linv::index;
using linv::Matrix;
using linv::io::NiftiSpace;
using namespace linv::testing;

#define REQUIRE_NIFTI_SUPPORT() \
  if (!linv::io::have_nifti_support()) GTEST_SKIP() << "built without NIfTI"

// A grid with every field away from its default; values exact in float32, as NIfTI-1 stores them.
NiftiSpace oblique_space(index nx, index ny, index nz) {
  NiftiSpace s;
  s.nx = nx, s.ny = ny, s.nz = nz;
  s.dx = 2.5, s.dy = 3, s.dz = 3.5;
  s.spatial_units = 2;  // mm
  s.tr = 1.5;
  s.qform_code = 1;
  s.quatern_b = 0, s.quatern_c = 0, s.quatern_d = 0.5;
  s.qoffset_x = -12.5, s.qoffset_y = 20.25, s.qoffset_z = -7.75;
  s.qfac = -1;
  s.sform_code = 2;
  s.srow = {{{-2.5, 0.125, 0, 30.5}, {0, 3, 0.25, -18}, {0.5, 0, 3.5, 11.75}}};
  s.descrip = "linv test space";
  return s;
}

void expect_same_space(const NiftiSpace& got, const NiftiSpace& want) {
  EXPECT_EQ(got.nx, want.nx);
  EXPECT_EQ(got.ny, want.ny);
  EXPECT_EQ(got.nz, want.nz);
  EXPECT_EQ(got.dx, want.dx);
  EXPECT_EQ(got.dy, want.dy);
  EXPECT_EQ(got.dz, want.dz);
  EXPECT_EQ(got.spatial_units, want.spatial_units);
  EXPECT_EQ(got.tr, want.tr);
  EXPECT_EQ(got.qform_code, want.qform_code);
  EXPECT_EQ(got.quatern_b, want.quatern_b);
  EXPECT_EQ(got.quatern_c, want.quatern_c);
  EXPECT_EQ(got.quatern_d, want.quatern_d);
  EXPECT_EQ(got.qoffset_x, want.qoffset_x);
  EXPECT_EQ(got.qoffset_y, want.qoffset_y);
  EXPECT_EQ(got.qoffset_z, want.qoffset_z);
  EXPECT_EQ(got.qfac, want.qfac);
  EXPECT_EQ(got.sform_code, want.sform_code);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(got.srow[i][j], want.srow[i][j]) << "srow " << i << ", " << j;
  EXPECT_EQ(got.descrip, want.descrip);
}

// About half the voxels, at random, in increasing order.
std::vector<index> random_mask(index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index> inside;
  for (index v = 0; v < n; ++v)
    if (rng() % 2 == 0) inside.push_back(v);
  if (inside.empty()) inside.push_back(n / 2);
  return inside;
}

// The mask as a one-volume float32 image of 0s and 1s.
void write_mask(const std::string& path, const NiftiSpace& space, const std::vector<index>& inside) {
  std::vector<index> all(static_cast<std::size_t>(space.voxels()));
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<index>(v);
  Matrix<float> ones(1, space.voxels());
  for (index v : inside) ones(0, v) = 1;
  linv::io::write_volumes<float>(path, space, all, ones.view());
}

template <linv::Real T>
void round_trip(const std::string& name, std::uint64_t salt) {
  const std::uint64_t seed = linv::testing::case_seed(salt);
  LINV_TRACE_SEED(seed);
  linv::testing::TempDir dir;
  const NiftiSpace space = oblique_space(5, 4, 3);
  const std::vector<index> inside = random_mask(space.voxels(), seed);
  const index V = 11, N = static_cast<index>(inside.size());
  const Matrix<T> values = linv::testing::random_matrix<T>(V, N, seed + 1);
  const std::string path = dir.file(name), mask = dir.file("mask.nii");
  linv::io::write_volumes<T>(path, space, inside, values.view());
  write_mask(mask, space, inside);

  const linv::io::FmriImage masked = linv::io::read_fmri(path, mask);
  EXPECT_EQ(masked.voxels, inside);
  expect_same_space(masked.space, space);
  ASSERT_EQ(masked.signals.rows(), V);
  ASSERT_EQ(masked.signals.cols(), N);
  for (index j = 0; j < N; ++j)
    for (index t = 0; t < V; ++t) ASSERT_EQ(masked.signals(t, j), static_cast<double>(values(t, j))) << t << ", " << j;

  // Without the mask: every voxel, zeros outside the mask's.
  const linv::io::FmriImage whole = linv::io::read_fmri(path);
  ASSERT_EQ(whole.signals.rows(), V);
  ASSERT_EQ(whole.signals.cols(), space.voxels());
  ASSERT_EQ(static_cast<index>(whole.voxels.size()), space.voxels());
  std::size_t next = 0;
  for (index v = 0; v < space.voxels(); ++v) {
    EXPECT_EQ(whole.voxels[static_cast<std::size_t>(v)], v);
    const bool in = next < inside.size() && inside[next] == v;
    for (index t = 0; t < V; ++t)
      ASSERT_EQ(whole.signals(t, v), in ? static_cast<double>(values(t, static_cast<index>(next))) : 0.0);
    if (in) ++next;
  }
  // Nothing but the outputs is left in the directory.
  std::vector<std::string> names = dir_entries(dir.path());
  std::sort(names.begin(), names.end());
  std::vector<std::string> want = {"mask.nii", name};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
}

TEST(Nifti, FloatAndDoubleRoundTripThroughAMask) {
  REQUIRE_NIFTI_SUPPORT();
  round_trip<float>("a.nii", 1);
  round_trip<double>("a.nii", 2);
  round_trip<float>("a.nii.gz", 3);
  round_trip<double>("a.nii.gz", 4);
}

TEST(Nifti, WritesTheDeclaredFormat) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  const NiftiSpace space = oblique_space(3, 2, 2);
  std::vector<index> all(12);
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<index>(v);
  const Matrix<double> values = linv::testing::random_matrix<double>(4, 12, linv::testing::case_seed(5));
  linv::io::write_volumes<double>(dir.file("a.nii"), space, all, values.view());
  const std::string bytes = read_bytes(dir.file("a.nii"));
  auto field = [&](std::size_t at, auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
  };
  ASSERT_GE(bytes.size(), 352u + 4 * 12 * 8);
  EXPECT_EQ(field(0, std::int32_t{}), 348);                      // NIfTI-1
  EXPECT_EQ(std::string(bytes.data() + 344, 4), std::string("n+1\0", 4));
  EXPECT_EQ(field(40, std::int16_t{}), 4);                       // dim[0]
  EXPECT_EQ(field(46, std::int16_t{}), 2);                       // dim[3]
  EXPECT_EQ(field(48, std::int16_t{}), 4);                       // dim[4]: volumes
  EXPECT_EQ(field(70, std::int16_t{}), 64);                      // datatype float64
  EXPECT_EQ(field(92, float{}), 1.5f);                           // pixdim[4]: TR
  EXPECT_EQ(static_cast<std::size_t>(field(108, float{})), 352u);  // vox_offset
  EXPECT_EQ(bytes.size(), 352u + 4 * 12 * 8);
  for (index t = 0; t < 4; ++t)  // volume after volume, x fastest
    for (index v = 0; v < 12; ++v)
      EXPECT_EQ(field(static_cast<std::size_t>(352 + (t * 12 + v) * 8), double{}), values(t, v));
}

TEST(Nifti, LongAxesUseNifti2) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  NiftiSpace space = NiftiSpace::grid(40000, 1, 1);
  const Matrix<float> values = linv::testing::random_matrix<float>(2, 3, linv::testing::case_seed(6));
  const std::vector<index> voxels = {0, 32768, 39999};
  linv::io::write_volumes<float>(dir.file("long.nii"), space, voxels, values.view());
  const std::string bytes = read_bytes(dir.file("long.nii"));
  std::int32_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 4);
  EXPECT_EQ(header_size, 540);  // NIfTI-2
  EXPECT_EQ(bytes.substr(4, 8), std::string("n+2\0\r\n\032\n", 8));
  EXPECT_EQ(bytes.size(), 544u + 2 * 40000 * 4);
  const linv::io::FmriImage back = linv::io::read_fmri(dir.file("long.nii"));
  ASSERT_EQ(back.signals.cols(), 40000);
  for (std::size_t j = 0; j < voxels.size(); ++j)
    for (index t = 0; t < 2; ++t)
      EXPECT_EQ(back.signals(t, voxels[j]), static_cast<double>(values(t, static_cast<index>(j))));
  expect_same_space(back.space, space);
}

TEST(Nifti, ThreeDimensionalImageIsOneTimePoint) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  const NiftiSpace space = NiftiSpace::grid(4, 3, 2, 3.0, 0.0);
  std::vector<index> all(24);
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<index>(v);
  const Matrix<double> values = linv::testing::random_matrix<double>(1, 24, linv::testing::case_seed(7));
  linv::io::write_volumes<double>(dir.file("vol.nii.gz"), space, all, values.view());
  const linv::io::FmriImage back = linv::io::read_fmri(dir.file("vol.nii.gz"));
  ASSERT_EQ(back.signals.rows(), 1);
  ASSERT_EQ(back.signals.cols(), 24);
  for (index v = 0; v < 24; ++v) EXPECT_EQ(back.signals(0, v), values(0, v));
  expect_same_space(back.space, space);
  // grid(): the volume's centre voxel sits at the origin, voxel_mm apart along each axis
  EXPECT_EQ(space.srow[0][0] * 1.5 + space.srow[0][3], 0.0);
  EXPECT_EQ(space.srow[1][1] * 1.0 + space.srow[1][3], 0.0);
  EXPECT_EQ(space.srow[2][2] * 0.5 + space.srow[2][3], 0.0);
}

#ifdef LINV_HAVE_NIFTI
struct ImageFree {
  void operator()(nifti_image* image) const noexcept { nifti_image_free(image); }
};

// An int16 image written by nifti2_io itself, with scaling and a TR given in milliseconds.
TEST(Nifti, ScaledIntegerDataWrittenByNifti2io) {
  const std::uint64_t seed = linv::testing::case_seed(8);
  LINV_TRACE_SEED(seed);
  linv::testing::TempDir dir;
  for (const char* name : {"int16.nii", "int16.nii.gz"}) {
    const std::int64_t dims[8] = {4, 6, 5, 2, 7, 1, 1, 1};
    std::unique_ptr<nifti_image, ImageFree> image(nifti_make_new_nim(dims, NIFTI_TYPE_INT16, 1));
    ASSERT_TRUE(image);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> dist(-32768, 32767);
    auto* data = static_cast<std::int16_t*>(image->data);
    for (std::int64_t k = 0; k < image->nvox; ++k) data[k] = static_cast<std::int16_t>(dist(rng));
    image->scl_slope = 0.25;
    image->scl_inter = -3;
    image->time_units = NIFTI_UNITS_MSEC;
    image->dt = image->pixdim[4] = 2500;
    const std::string path = dir.file(name);
    ASSERT_EQ(nifti_set_filenames(image.get(), path.c_str(), 0, 1), 0);
    nifti_image_write(image.get());

    const linv::io::FmriImage back = linv::io::read_fmri(path);
    ASSERT_EQ(back.signals.rows(), 7);
    ASSERT_EQ(back.signals.cols(), 60);
    EXPECT_EQ(back.space.tr, 2.5);
    for (index t = 0; t < 7; ++t)
      for (index v = 0; v < 60; ++v)  // exact: a quarter of an int16, minus 3
        ASSERT_EQ(back.signals(t, v), data[t * 60 + v] * 0.25 - 3) << name << " at " << t << ", " << v;
  }
}

// A header may announce any size: 10^14 voxels announced by a file of a few hundred bytes are refused by
// comparing the two sizes before anything is allocated; compressed, by the most the bytes can inflate to.
TEST(Nifti, RefusesHeadersAnnouncingMoreThanTheFileHolds) {
  linv::testing::TempDir dir;
  const std::vector<index> all = {0, 1, 2, 3, 4, 5, 6, 7};
  linv::io::write_volumes<float>(dir.file("small.nii"), NiftiSpace::grid(2, 2, 2), all,
                                 Matrix<float>(1, 8).view());
  std::string bytes = read_bytes(dir.file("small.nii"));
  const std::int16_t dim[5] = {4, 10000, 10000, 10000, 100};  // NIfTI-1: dim[0..4], int16 at byte 40
  std::memcpy(bytes.data() + 40, dim, sizeof dim);
  write_bytes(dir.file("huge.nii"), bytes);
  expect_parse_error([&] { (void)linv::io::read_fmri(dir.file("huge.nii")); }, dir.file("huge.nii"),
                     fmt::format("need 400000000000352 bytes, the file has {}", bytes.size()));

  const std::string gz = dir.file("huge.nii.gz");
  znzFile out = znzopen(gz.c_str(), "wb", 1);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(znzwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
  Xznzclose(&out);
  expect_parse_error([&] { (void)linv::io::read_fmri(gz); }, gz, "which inflate to at most");
}
#endif

TEST(Nifti, MasksOnAnotherGridAreRefusedNamingBoth) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  const NiftiSpace space = oblique_space(5, 4, 3);
  const std::vector<index> voxels = {0, 7, 59};
  const Matrix<float> values = linv::testing::random_matrix<float>(3, 3, linv::testing::case_seed(9));
  linv::io::write_volumes<float>(dir.file("x.nii"), space, voxels, values.view());
  write_mask(dir.file("small.nii"), oblique_space(5, 4, 2), {1, 2});
  try {
    (void)linv::io::read_fmri(dir.file("x.nii"), dir.file("small.nii"));
    ADD_FAILURE() << "a mask on another grid was accepted";
  } catch (const linv::InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "5x4x2"));
    EXPECT_TRUE(contains(e.what(), "5x4x3"));
    EXPECT_TRUE(contains(e.what(), "small.nii"));
  }
  // a mask of several volumes, and one that selects nothing
  linv::io::write_volumes<float>(dir.file("two.nii"), space, voxels, values.view());
  EXPECT_THROW((void)linv::io::read_fmri(dir.file("x.nii"), dir.file("two.nii")), linv::InvalidArgument);
  write_mask(dir.file("empty.nii"), space, {});
  try {
    (void)linv::io::read_fmri(dir.file("x.nii"), dir.file("empty.nii"));
    ADD_FAILURE() << "an empty mask was accepted";
  } catch (const linv::InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "selects no voxel"));
  }
}

TEST(Nifti, NonFiniteVoxelsInsideTheMaskAreNamed) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  const NiftiSpace space = oblique_space(5, 4, 3);
  std::vector<index> all(60);
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<index>(v);
  Matrix<double> values = linv::testing::random_matrix<double>(10, 60, linv::testing::case_seed(10));
  const index bad = 3 + 5 * (2 + 4 * 1);  // voxel (3, 2, 1)
  values(9, bad) = std::numeric_limits<double>::quiet_NaN();
  values(4, 0) = std::numeric_limits<double>::infinity();  // outside the mask below
  linv::io::write_volumes<double>(dir.file("nan.nii"), space, all, values.view());
  write_mask(dir.file("mask.nii"), space, {bad, 59});
  try {
    (void)linv::io::read_fmri(dir.file("nan.nii"), dir.file("mask.nii"));
    ADD_FAILURE() << "NaN accepted";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "voxel (3, 2, 1) is NaN at time point 9"));
    EXPECT_EQ(e.exit_code(), linv::ExitCode::bad_input);
  }
  write_mask(dir.file("mask.nii"), space, {1, 59});  // leaves both out
  EXPECT_EQ(linv::io::read_fmri(dir.file("nan.nii"), dir.file("mask.nii")).signals.cols(), 2);
  try {
    (void)linv::io::read_fmri(dir.file("nan.nii"));
    ADD_FAILURE() << "Inf accepted";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "voxel (0, 0, 0) is infinite at time point 4"));
  }
}

TEST(Nifti, MissingMalformedAndTruncatedFiles) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  try {
    (void)linv::io::read_fmri(dir.file("absent.nii"));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const linv::InputError& e) {
    EXPECT_TRUE(contains(e.what(), "absent.nii"));
    EXPECT_TRUE(contains(e.what(), "No such file"));
  }
  write_bytes(dir.file("text.nii"), std::string(400, 'x'));
  expect_parse_error([&] { (void)linv::io::read_fmri(dir.file("text.nii")); }, dir.file("text.nii"), "not a NIfTI");

  const NiftiSpace space = oblique_space(5, 4, 3);
  std::vector<index> all(60);
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<index>(v);
  const Matrix<double> values = linv::testing::random_matrix<double>(20, 60, linv::testing::case_seed(11));
  for (const char* name : {"whole.nii", "whole.nii.gz"}) {
    linv::io::write_volumes<double>(dir.file(name), space, all, values.view());
    const std::string bytes = read_bytes(dir.file(name));
    const std::string cut = std::string("cut-") + name, stub = std::string("stub-") + name;
    write_bytes(dir.file(cut), bytes.substr(0, bytes.size() / 2));  // inside the data
    write_bytes(dir.file(stub), bytes.substr(0, 100));              // inside the header
    expect_parse_error([&] { (void)linv::io::read_fmri(dir.file(cut)); }, dir.file(cut), "end early");
    expect_parse_error([&] { (void)linv::io::read_fmri(dir.file(stub)); }, dir.file(stub), "not a NIfTI");
  }
}

TEST(Nifti, FailedWritesLeaveTheTargetAlone) {
  REQUIRE_NIFTI_SUPPORT();
  linv::testing::TempDir dir;
  const NiftiSpace space = oblique_space(5, 4, 3);
  const Matrix<float> values = linv::testing::random_matrix<float>(2, 3, linv::testing::case_seed(12));
  const std::string path = dir.file("x.nii.gz");
  linv::io::write_volumes<float>(path, space, {1, 2, 3}, values.view());
  const std::string before = read_bytes(path);
  // bad voxel indices and shapes are refused before anything is written
  EXPECT_THROW(linv::io::write_volumes<float>(path, space, {1, 2, 60}, values.view()), linv::InvalidArgument);
  EXPECT_THROW(linv::io::write_volumes<float>(path, space, {1, 2}, values.view()), linv::InvalidArgument);
  EXPECT_THROW(linv::io::write_volumes<float>(dir.file("x.npy"), space, {1, 2, 3}, values.view()),
               linv::InvalidArgument);
  EXPECT_EQ(read_bytes(path), before);
  // a failure after the data are written (the target is a directory: the rename fails) leaves no temporary
  std::filesystem::create_directories(dir.file("d.nii") + "/inside");
  EXPECT_THROW(linv::io::write_volumes<float>(dir.file("d.nii"), space, {1, 2, 3}, values.view()), linv::InputError);
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("d.nii") + "/inside"));
  std::vector<std::string> names = dir_entries(dir.path());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"d.nii", "x.nii.gz"}));
}

TEST(Nifti, WithoutLibnifti2SaysSo) {
  if (linv::io::have_nifti_support()) GTEST_SKIP() << "this linv has NIfTI support";
  linv::testing::TempDir dir;
  for (auto attempt : {+[](const std::string& p) { (void)linv::io::read_fmri(p); },
                       +[](const std::string& p) {
                         linv::io::write_volumes<float>(p, NiftiSpace::grid(1, 1, 1), {0}, Matrix<float>(1, 1).view());
                       }}) {
    try {
      attempt(dir.file("x.nii.gz"));
      ADD_FAILURE() << "no error";
    } catch (const linv::InputError& e) {
      EXPECT_TRUE(contains(e.what(), "built without NIfTI support (libnifti2)"));
    }
  }
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

TEST(Nifti, RecognisesItsFileNames) {
  EXPECT_TRUE(linv::io::is_nifti_path("a/b.nii"));
  EXPECT_TRUE(linv::io::is_nifti_path("B.NII.GZ"));
  EXPECT_FALSE(linv::io::is_nifti_path("b.nii.npy"));
  EXPECT_FALSE(linv::io::is_nifti_path("b.gz"));
}

}  // namespace
