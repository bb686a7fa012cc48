// NIfTI-1/2 fMRI images through nifti_clib: nifti2_io parses and builds headers, its znz layer moves the
// voxels (plain or gzip). linv reads and writes the voxels itself, a few volumes at a time, rather than
// through nifti_image_load: that loader silently turns NaN and Inf into zeros (hiding bad voxels), and it
// would hold the whole image in the file's type besides the matrix linv builds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "io/formats.hpp"
#include "linv/errors.hpp"

#ifdef LINV_HAVE_NIFTI
#include <nifti2_io.h>
#endif

namespace linv::io {

namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

bool is_nifti_path(const std::string& path) {
  const std::string lower = lowercase(path);
  return lower.ends_with(".nii") || lower.ends_with(".nii.gz");
}

bool have_nifti_support() {
#ifdef LINV_HAVE_NIFTI
  return true;
#else
  return false;
#endif
}

NiftiSpace NiftiSpace::grid(index nx, index ny, index nz, double voxel_mm, double tr) {
  if (nx < 1 || ny < 1 || nz < 1)
    throw InvalidArgument(fmt::format("a NIfTI grid needs at least one voxel per side, not {}x{}x{}", nx, ny, nz));
  if (!(voxel_mm > 0) || !std::isfinite(voxel_mm) || !(tr >= 0) || !std::isfinite(tr))
    throw InvalidArgument(fmt::format("a NIfTI grid needs a positive voxel size and a TR >= 0, not {} mm and {} s",
                                      voxel_mm, tr));
  NiftiSpace s;
  s.nx = nx, s.ny = ny, s.nz = nz;
  s.dx = s.dy = s.dz = voxel_mm;
  s.spatial_units = 2;  // NIFTI_UNITS_MM
  s.tr = tr;
  const index sides[3] = {nx, ny, nz};
  for (int axis = 0; axis < 3; ++axis) {
    s.srow[static_cast<std::size_t>(axis)][static_cast<std::size_t>(axis)] = voxel_mm;
    s.srow[static_cast<std::size_t>(axis)][3] = -voxel_mm * static_cast<double>(sides[axis] - 1) / 2;
  }
  s.qform_code = s.sform_code = 1;  // NIFTI_XFORM_SCANNER_ANAT
  s.qoffset_x = s.srow[0][3], s.qoffset_y = s.srow[1][3], s.qoffset_z = s.srow[2][3];
  return s;
}

#ifdef LINV_HAVE_NIFTI

namespace {

// Volumes moved per pass between the file and the matrix: 8 doubles of one voxel's time course fill a
// 64-byte cache line, so the transposition touches each line of the matrix once per pass.
constexpr index volumes_per_pass = 8;
// znz passes lengths to zlib as int: larger transfers go in pieces.
constexpr std::size_t max_transfer = std::size_t{1} << 30;

void configure_nifti() {
  static std::once_flag once;
  std::call_once(once, [] {
    nifti_set_debug_level(0);       // linv raises its own errors instead of nifti2_io's messages on stderr
    nifti_set_allow_upper_fext(1);  // X.NII.GZ as well as x.nii.gz
  });
}

struct ImageFree {
  void operator()(nifti_image* image) const noexcept { nifti_image_free(image); }
};
using Header = std::unique_ptr<nifti_image, ImageFree>;
struct ZnzClose {
  void operator()(znzptr* file) const noexcept { Xznzclose(&file); }
};
using Stream = std::unique_ptr<znzptr, ZnzClose>;

// Calls f(S{}) with S the C++ type of a real NIfTI datatype; false for the others (complex, RGB, 128-bit).
template <class F>
bool with_type(int datatype, F&& f) {
  switch (datatype) {
    case NIFTI_TYPE_UINT8: f(std::uint8_t{}); return true;
    case NIFTI_TYPE_INT8: f(std::int8_t{}); return true;
    case NIFTI_TYPE_UINT16: f(std::uint16_t{}); return true;
    case NIFTI_TYPE_INT16: f(std::int16_t{}); return true;
    case NIFTI_TYPE_UINT32: f(std::uint32_t{}); return true;
    case NIFTI_TYPE_INT32: f(std::int32_t{}); return true;
    case NIFTI_TYPE_UINT64: f(std::uint64_t{}); return true;
    case NIFTI_TYPE_INT64: f(std::int64_t{}); return true;
    case NIFTI_TYPE_FLOAT32: f(float{}); return true;
    case NIFTI_TYPE_FLOAT64: f(double{}); return true;
    default: return false;
  }
}

std::string grid_text(index nx, index ny, index nz) { return fmt::format("{}x{}x{}", nx, ny, nz); }

// An image opened for reading: its header, checked for what linv reads, and a stream positioned at the
// first volume. Volumes are read in order.
class Source {
 public:
  explicit Source(const std::string& path) : path_(path) {
    { detail::InputFile probe(path); }  // a missing or unreadable file: InputError with the OS's reason
    configure_nifti();
    header_.reset(nifti_image_read(path.c_str(), /*read_data=*/0));
    if (!header_)
      throw ParseError(path, -1, -1, "not a NIfTI-1 or NIfTI-2 image (its header is missing, truncated or inconsistent)");
    const nifti_image& h = *header_;
    // dim[i] beyond dim[0] is meaningless (nifti2_io leaves 0 or 1 there); a 3-D image is one volume.
    for (std::int64_t i = 5; i <= h.ndim; ++i)
      if (h.dim[i] > 1)
        throw InputError(fmt::format("{}: a {}-D image ({}); linv reads 3-D and 4-D images", path, h.ndim,
                                     fmt::join(h.dim + 1, h.dim + 1 + h.ndim, "x")));
    volumes_ = h.ndim >= 4 ? std::max<index>(h.nt, 1) : 1;
    if (!with_type(h.datatype, [](auto) {}))
      throw InputError(fmt::format("{}: voxels of type {} are not supported; linv reads real images (8- to 64-bit "
                                   "integers, float32, float64)",
                                   path, nifti_datatype_string(h.datatype)));
    const bool compressed = nifti_is_gzfile(h.iname) != 0;
    // A header may announce any size: the file must be able to hold the voxels before anything is sized by
    // them. Its length shows that exactly when it is uncompressed; compressed, it inflates to at most
    // kMaxDeflateRatio times its length. The sizes are multiplied in double, as headers may announce
    // sizes whose product overflows 64 bits.
    std::error_code ec;
    const auto size = static_cast<std::int64_t>(std::filesystem::file_size(h.iname, ec));
    if (ec) throw InputError(fmt::format("could not read {}: {}", h.iname, ec.message()));
    const double needed = static_cast<double>(h.iname_offset) + static_cast<double>(h.nx) * static_cast<double>(h.ny) *
                                                                    static_cast<double>(h.nz) * h.nbyper *
                                                                    static_cast<double>(volumes_);
    const double room = static_cast<double>(size) * static_cast<double>(compressed ? detail::kMaxDeflateRatio : 1);
    if (needed > room)
      throw ParseError(h.iname, size, -1,
                       fmt::format("the image data end early: {} volumes of {} voxels of {} bytes from byte {} "
                                   "need {:.0f} bytes, the file has {}{}",
                                   volumes_, grid(), h.nbyper, h.iname_offset, needed, size,
                                   compressed ? fmt::format(", which inflate to at most {:.0f}", room) : ""));
    volume_bytes_ = h.nx * h.ny * h.nz * h.nbyper;
    stream_.reset(znzopen(h.iname, "rb", compressed ? 1 : 0));
    if (!stream_) throw InputError(fmt::format("could not read {}: {}", h.iname, std::strerror(errno)));
    if (znzseek(stream_.get(), static_cast<znz_off_t>(h.iname_offset), SEEK_SET) < 0)
      throw ParseError(h.iname, h.iname_offset, -1, "the image data start beyond the end of the file");
  }

  const std::string& path() const noexcept { return path_; }
  const nifti_image& header() const noexcept { return *header_; }
  index volumes() const noexcept { return volumes_; }
  index voxels() const noexcept { return header_->nx * header_->ny * header_->nz; }
  std::string grid() const { return grid_text(header_->nx, header_->ny, header_->nz); }

  // The next `count` volumes into `raw` (volume after volume, in the machine's byte order).
  void read(index count, std::vector<unsigned char>& raw) {
    const auto bytes = static_cast<std::size_t>(count * volume_bytes_);
    raw.resize(bytes);
    for (std::size_t done = 0; done < bytes;) {
      const std::size_t want = std::min(bytes - done, max_transfer);
      const std::size_t got = znzread(raw.data() + done, 1, want, stream_.get());
      if (got != want) {  // znzread reports zlib's errors as a short (or wrapped-around) count
        const std::int64_t at = header_->iname_offset + next_ * volume_bytes_ + static_cast<std::int64_t>(done);
        throw ParseError(header_->iname, at, -1,
                         fmt::format("the image data end early, in volume {} of {} (a damaged or truncated file{})",
                                     next_ + static_cast<index>(done / static_cast<std::size_t>(volume_bytes_)) + 1,
                                     volumes(), nifti_is_gzfile(header_->iname) ? "; the byte is uncompressed" : ""));
      }
      done += got;
    }
    if (header_->swapsize > 1 && header_->byteorder != nifti_short_order())
      nifti_swap_Nbytes(static_cast<std::int64_t>(bytes) / header_->swapsize, header_->swapsize, raw.data());
    next_ += count;
  }

  // Calls f(j, k, value) for voxel selected[j] in volume k of the `count` volumes in `raw` (voxel by voxel,
  // so that a caller writing time courses fills them in order), values scaled by scl_slope/scl_inter.
  template <class F>
  void for_each_value(const std::vector<unsigned char>& raw, index count, const std::vector<index>& selected,
                      F&& f) const {
    // scl_slope 0 means "no scaling"; slope 1 and intercept 0 reproduce every value exactly.
    const double slope = header_->scl_slope != 0 ? header_->scl_slope : 1.0;
    const double inter = header_->scl_slope != 0 ? header_->scl_inter : 0.0;
    const index n = voxels();
    with_type(header_->datatype, [&](auto zero) {
      using S = decltype(zero);
      const unsigned char* base = raw.data();
      for (std::size_t j = 0; j < selected.size(); ++j)
        for (index k = 0; k < count; ++k) {
          S s;
          std::memcpy(&s, base + static_cast<std::size_t>(k * n + selected[j]) * sizeof(S), sizeof(S));
          f(j, k, static_cast<double>(s) * slope + inter);
        }
    });
  }

  index next_volume() const noexcept { return next_; }

 private:
  std::string path_;
  Header header_;
  Stream stream_;
  std::int64_t volume_bytes_ = 0;
  index volumes_ = 1, next_ = 0;
};

NiftiSpace space_of(const nifti_image& h) {
  NiftiSpace s;
  s.nx = h.nx, s.ny = h.ny, s.nz = h.nz;
  s.dx = h.dx, s.dy = h.dy, s.dz = h.dz;
  s.spatial_units = h.xyz_units;
  switch (h.time_units) {
    case NIFTI_UNITS_UNKNOWN:  // most tools write seconds without saying so
    case NIFTI_UNITS_SEC: s.tr = h.dt; break;
    case NIFTI_UNITS_MSEC: s.tr = h.dt / 1e3; break;
    case NIFTI_UNITS_USEC: s.tr = h.dt / 1e6; break;
    default: s.tr = 0;  // Hz, ppm, rad/s: the fourth axis is not time
  }
  if (!(s.tr > 0) || !std::isfinite(s.tr)) s.tr = 0;
  s.qform_code = h.qform_code;
  s.quatern_b = h.quatern_b, s.quatern_c = h.quatern_c, s.quatern_d = h.quatern_d;
  s.qoffset_x = h.qoffset_x, s.qoffset_y = h.qoffset_y, s.qoffset_z = h.qoffset_z;
  s.qfac = h.qfac < 0 ? -1.0 : 1.0;
  s.sform_code = h.sform_code;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) s.srow[i][j] = h.sto_xyz.m[i][j];
  s.descrip.assign(h.descrip, strnlen(h.descrip, sizeof h.descrip));
  return s;
}

// The voxels where the mask is nonzero (and not NaN), checked against the image's grid.
std::vector<index> mask_voxels(const std::string& mask_path, const Source& image) {
  Source mask(mask_path);
  const nifti_image &m = mask.header(), &h = image.header();
  if (m.nx != h.nx || m.ny != h.ny || m.nz != h.nz)
    throw InvalidArgument(fmt::format("the mask {} is {} voxels but the image {} is {}: they must share one grid",
                                      mask_path, mask.grid(), image.path(), image.grid()));
  if (mask.volumes() != 1)
    throw InvalidArgument(fmt::format("the mask {} has {} volumes; it should be one 3-D volume", mask_path,
                                      mask.volumes()));
  std::vector<unsigned char> raw;
  mask.read(1, raw);
  std::vector<index> all(static_cast<std::size_t>(mask.voxels()));
  std::iota(all.begin(), all.end(), index{0});
  std::vector<index> inside;
  mask.for_each_value(raw, 1, all, [&](std::size_t j, index, double value) {
    if (value != 0 && !std::isnan(value)) inside.push_back(all[j]);
  });
  if (inside.empty()) throw InvalidArgument(fmt::format("the mask {} selects no voxel (it is all zero)", mask_path));
  return inside;
}

// Checks a path for writing; true for .nii.gz (compressed).
bool compressed_nifti(const std::string& path) {
  if (!is_nifti_path(path))
    throw InvalidArgument(fmt::format("{}: NIfTI images are written to .nii or .nii.gz files", path));
  return lowercase(path).ends_with(".gz");
}

void write_all(znzFile file, const void* data, std::size_t bytes, const detail::AtomicFile& out) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t piece = std::min(bytes - done, max_transfer);
    // znzwrite's buffer is not const in older nifti_clib releases
    if (znzwrite(const_cast<unsigned char*>(p + done), 1, piece, file) != piece) out.fail(std::strerror(errno));
    done += piece;
  }
}

}  // namespace

FmriImage read_fmri(const std::string& path, const std::string& mask_path) {
  Source image(path);
  FmriImage out;
  out.space = space_of(image.header());
  if (mask_path.empty()) {
    out.voxels.resize(static_cast<std::size_t>(image.voxels()));
    std::iota(out.voxels.begin(), out.voxels.end(), index{0});
  } else {
    out.voxels = mask_voxels(mask_path, image);
  }
  const index T = image.volumes(), N = static_cast<index>(out.voxels.size()), nx = image.header().nx,
              ny = image.header().ny;
  out.signals = Matrix<double>::uninitialized(T, N);
  std::vector<unsigned char> raw;
  while (image.next_volume() < T) {
    const index t0 = image.next_volume(), count = std::min(volumes_per_pass, T - t0);
    image.read(count, raw);
    double* signals = out.signals.data();
    image.for_each_value(raw, count, out.voxels, [&](std::size_t j, index k, double value) {
      if (!std::isfinite(value)) {
        const index v = out.voxels[j];
        throw InputError(fmt::format("{}: voxel ({}, {}, {}) is {} at time point {} (0-based); linv needs finite "
                                     "data{}",
                                     path, v % nx, v / nx % ny, v / (nx * ny), std::isnan(value) ? "NaN" : "infinite",
                                     t0 + k, mask_path.empty() ? ": a brain mask may leave such voxels out" : " in the mask"));
      }
      signals[static_cast<index>(j) * T + t0 + k] = value;
    });
  }
  return out;
}

template <Real T>
void write_volumes(const std::string& path, const NiftiSpace& space, const std::vector<index>& voxels,
                   ConstMatrixView<T> values) {
  const bool compressed = compressed_nifti(path);
  require_host(values.device(), "write_volumes");
  const index n = space.voxels(), V = values.rows();
  if (space.nx < 1 || space.ny < 1 || space.nz < 1)
    throw InvalidArgument(fmt::format("{}: a NIfTI grid of {} voxels", path, grid_text(space.nx, space.ny, space.nz)));
  if (V < 1) throw InvalidArgument(fmt::format("{}: no volumes to write (the values have no rows)", path));
  if (static_cast<index>(voxels.size()) != values.cols())
    throw InvalidArgument(fmt::format("{}: {} values per volume ({} x {}) for {} voxels", path, values.cols(), V,
                                      values.cols(), voxels.size()));
  for (std::size_t j = 0; j < voxels.size(); ++j)
    if (voxels[j] < 0 || voxels[j] >= n)
      throw InvalidArgument(fmt::format("{}: voxel index {} (entry {}) is outside the {} grid", path, voxels[j], j,
                                        grid_text(space.nx, space.ny, space.nz)));
  configure_nifti();
  if (compressed && !nifti_compiled_with_zlib())
    throw InputError(fmt::format("{}: this nifti_clib was built without zlib; write .nii", path));

  const std::int64_t dims[8] = {V > 1 ? 4 : 3, space.nx, space.ny, space.nz, V, 1, 1, 1};
  Header h(nifti_make_new_nim(dims, std::same_as<T, float> ? NIFTI_TYPE_FLOAT32 : NIFTI_TYPE_FLOAT64, 0));
  if (!h) throw InputError(fmt::format("could not write {}: nifti2_io could not make a header", path));
  h->dx = h->pixdim[1] = space.dx;
  h->dy = h->pixdim[2] = space.dy;
  h->dz = h->pixdim[3] = space.dz;
  h->dt = h->pixdim[4] = space.tr;
  h->xyz_units = space.spatial_units;
  h->time_units = space.tr > 0 ? NIFTI_UNITS_SEC : NIFTI_UNITS_UNKNOWN;
  h->qform_code = space.qform_code;
  h->quatern_b = space.quatern_b, h->quatern_c = space.quatern_c, h->quatern_d = space.quatern_d;
  h->qoffset_x = space.qoffset_x, h->qoffset_y = space.qoffset_y, h->qoffset_z = space.qoffset_z;
  h->qfac = space.qfac < 0 ? -1.0 : 1.0;
  h->sform_code = space.sform_code;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) h->sto_xyz.m[i][j] = space.srow[i][j];
  h->sto_xyz.m[3][0] = h->sto_xyz.m[3][1] = h->sto_xyz.m[3][2] = 0, h->sto_xyz.m[3][3] = 1;
  std::snprintf(h->descrip, sizeof h->descrip, "%s", space.descrip.c_str());

  // NIfTI-1 (the format every tool reads) unless a dimension needs NIfTI-2's 64-bit fields. linv writes
  // the header nifti2_io converts, rather than through nifti_image_write_hdr_img2, which picks the version
  // itself, announcing it on stderr.
  const bool nifti1 = std::max({space.nx, space.ny, space.nz, V}) <= 32767;
  nifti_set_iname_offset(h.get(), nifti1 ? 1 : 2);  // the header and an empty extension flag
  nifti_1_header header1;
  nifti_2_header header2;
  if (nifti1 ? nifti_convert_nim2n1hdr(h.get(), &header1) != 0 : nifti_convert_nim2n2hdr(h.get(), &header2) != 0)
    throw InputError(fmt::format("could not write {}: nifti2_io could not make a header", path));
  // the single-file signatures ("n+1", "n+2" and its line-ending check bytes)
  if (nifti1)
    std::memcpy(header1.magic, "n+1", 4);
  else
    std::memcpy(header2.magic, "n+2\0\r\n\032\n", 8);
  const char extension_flag[4] = {0, 0, 0, 0};  // no header extensions

  detail::AtomicFile out(path);
  out.close_handle();  // znz reopens the temporary file by name, compressed or not
  // gzip level 1: on noisy float32 fMRI data, level 6 saved 0.4 % of the size for 12 % more time.
  Stream file(znzopen(out.temp_path().c_str(), compressed ? "wb1" : "wb", compressed ? 1 : 0));
  if (!file) out.fail(std::strerror(errno));
  if (nifti1)
    write_all(file.get(), &header1, sizeof header1, out);
  else
    write_all(file.get(), &header2, sizeof header2, out);
  write_all(file.get(), extension_flag, sizeof extension_flag, out);

  std::vector<T> pass(static_cast<std::size_t>(std::min(volumes_per_pass, V) * n), T(0));  // zero outside voxels
  for (index t0 = 0; t0 < V; t0 += volumes_per_pass) {
    const index count = std::min(volumes_per_pass, V - t0);
    for (std::size_t j = 0; j < voxels.size(); ++j)
      for (index k = 0; k < count; ++k)
        pass[static_cast<std::size_t>(k * n + voxels[j])] = values(t0 + k, static_cast<index>(j));
    write_all(file.get(), pass.data(), static_cast<std::size_t>(count * n) * sizeof(T), out);
  }
  znzFile open = file.release();
  if (Xznzclose(&open) != 0) out.fail("closing the file failed (disk full?)");
  out.commit();
}

#else

namespace {
[[noreturn]] void no_nifti(const std::string& path) {
  throw InputError(fmt::format("linv was built without NIfTI support (libnifti2): cannot read or write {}; install "
                               "libnifti2-dev and rebuild, or use .npy",
                               path));
}
}  // namespace

FmriImage read_fmri(const std::string& path, const std::string&) { no_nifti(path); }

template <Real T>
void write_volumes(const std::string& path, const NiftiSpace&, const std::vector<index>&, ConstMatrixView<T>) {
  no_nifti(path);
}

#endif

template void write_volumes<float>(const std::string&, const NiftiSpace&, const std::vector<index>&,
                                   ConstMatrixView<float>);
template void write_volumes<double>(const std::string&, const NiftiSpace&, const std::vector<index>&,
                                    ConstMatrixView<double>);

}  // namespace linv::io
