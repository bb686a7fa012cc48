// _linv: linv's readers and writers (linv::io): matrices, stacks, images and fMRI runs by file extension.
// linv/io.py chooses among them.
#include "linv/io.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <complex>
#include <variant>

#include "common.hpp"

namespace linv_py {
namespace {

using linv::index;
namespace io = linv::io;

template <class T>
nb::object stack_object(io::MatrixStack<T>&& s) {
  linv::Matrix<T> m = linv::Matrix<T>::uninitialized(s.rows, s.cols * s.count);
  std::copy(s.data.begin(), s.data.end(), m.data());
  const auto r = static_cast<std::int64_t>(s.rows), c = static_cast<std::int64_t>(s.cols);
  return nb::cast(to_numpy_nd<T>(std::move(m),
                                 {static_cast<std::size_t>(s.count), static_cast<std::size_t>(s.rows),
                                  static_cast<std::size_t>(s.cols)},
                                 {r * c, 1, r}));
}

// A matrix in the file's element type, complex ones included (io::read_dense).
nb::object read_matrix(const std::string& spec) {
  io::AnyDense m;
  {
    nb::gil_scoped_release released;
    m = io::read_dense(spec);
  }
  return std::visit([](auto& matrix) { return numpy_object(std::move(matrix)); }, m);
}

nb::object read_stack(const std::string& spec) {
  io::AnyStack s;
  {
    nb::gil_scoped_release released;
    s = io::read_stack(spec);
  }
  if (auto* d = std::get_if<io::MatrixStack<double>>(&s)) return stack_object<double>(std::move(*d));
  return stack_object<float>(std::move(std::get<io::MatrixStack<float>>(s)));
}

// (height x (width * channels) pixels, channels), or the grey image with grey = true.
nb::tuple read_image(const std::string& path, bool grey) {
  io::Image image;
  {
    nb::gil_scoped_release released;
    if (grey) image.pixels = io::read_image(path);
    else image = io::read_image_channels(path);
  }
  const int channels = grey ? 1 : image.channels;
  return nb::make_tuple(numpy_object<double>(std::move(image.pixels)), channels);
}

// io::NiftiSpace as the dict read_fmri returns and write_fmri takes: every field, so that a map written
// back lands where the run was (orientation included).
nb::dict space_dict(const io::NiftiSpace& s) {
  nb::dict d;
  d["shape"] = nb::make_tuple(s.nx, s.ny, s.nz);
  d["voxel_size"] = nb::make_tuple(s.dx, s.dy, s.dz);
  d["spatial_units"] = s.spatial_units;
  d["tr"] = s.tr;
  d["qform_code"] = s.qform_code;
  d["quatern"] = nb::make_tuple(s.quatern_b, s.quatern_c, s.quatern_d);
  d["qoffset"] = nb::make_tuple(s.qoffset_x, s.qoffset_y, s.qoffset_z);
  d["qfac"] = s.qfac;
  d["sform_code"] = s.sform_code;
  nb::list srow;
  for (const auto& row : s.srow) srow.append(nb::make_tuple(row[0], row[1], row[2], row[3]));
  d["srow"] = srow;
  d["descrip"] = s.descrip;
  return d;
}

// The inverse of space_dict, from a dict checked in linv/io.py (every key present, the right lengths).
io::NiftiSpace space_from(const nb::dict& d) {
  auto numbers = [&](const char* key, double* out, std::size_t count) {
    const nb::sequence t = nb::cast<nb::sequence>(d[key]);
    for (std::size_t i = 0; i < count; ++i) out[i] = nb::cast<double>(t[i]);
  };
  io::NiftiSpace s;
  double shape[3], size[3], quatern[3], offset[3];
  numbers("shape", shape, 3);
  numbers("voxel_size", size, 3);
  numbers("quatern", quatern, 3);
  numbers("qoffset", offset, 3);
  s.nx = static_cast<index>(shape[0]);
  s.ny = static_cast<index>(shape[1]);
  s.nz = static_cast<index>(shape[2]);
  s.dx = size[0], s.dy = size[1], s.dz = size[2];
  s.quatern_b = quatern[0], s.quatern_c = quatern[1], s.quatern_d = quatern[2];
  s.qoffset_x = offset[0], s.qoffset_y = offset[1], s.qoffset_z = offset[2];
  s.spatial_units = nb::cast<int>(d["spatial_units"]);
  s.tr = nb::cast<double>(d["tr"]);
  s.qform_code = nb::cast<int>(d["qform_code"]);
  s.qfac = nb::cast<double>(d["qfac"]);
  s.sform_code = nb::cast<int>(d["sform_code"]);
  const nb::sequence srow = nb::cast<nb::sequence>(d["srow"]);
  for (std::size_t i = 0; i < 3; ++i) {
    const nb::sequence row = nb::cast<nb::sequence>(srow[i]);
    for (std::size_t j = 0; j < 4; ++j) s.srow[i][j] = nb::cast<double>(row[j]);
  }
  s.descrip = nb::cast<std::string>(d["descrip"]);
  return s;
}

nb::tuple read_fmri(const std::string& path, const std::string& mask) {
  io::FmriImage f;
  {
    nb::gil_scoped_release released;
    f = io::read_fmri(path, mask);
  }
  return nb::make_tuple(numpy_object<double>(std::move(f.signals)), vector_to_numpy<index>(f.voxels),
                        space_dict(f.space));
}

// values (V x N), column j at voxel voxels[j]; the checks of shapes and indices are io::write_volumes's.
template <class T>
void write_fmri(const std::string& path, const Input<T>& values, const nb::ndarray<const std::int64_t, nb::ndim<1>,
                nb::device::cpu>& voxels, const nb::dict& space) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> V = column_major(values, copy);
  const std::vector<index> where(voxels.data(), voxels.data() + voxels.shape(0));
  const io::NiftiSpace s = space_from(space);
  nb::gil_scoped_release released;
  io::write_volumes<T>(path, s, where, V);
}

nb::dict grid_space(index nx, index ny, index nz, double voxel_mm, double tr) {
  return space_dict(io::NiftiSpace::grid(nx, ny, nz, voxel_mm, tr));
}

template <class T>
void write_matrix(const std::string& spec, const Input<T>& a) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = column_major(a, copy);
  nb::gil_scoped_release released;
  io::write_matrix<T>(spec, A);
}

// `at` (count, cols, rows) in C order: each matrix column-major, as io::MatrixStack holds them.
template <class T>
void write_stack(const std::string& spec, const Stack<T>& at) {
  io::MatrixStack<T> s;
  s.count = static_cast<index>(at.shape(0));
  s.cols = static_cast<index>(at.shape(1));
  s.rows = static_cast<index>(at.shape(2));
  s.data.assign(at.data(), at.data() + at.size());
  nb::gil_scoped_release released;
  io::write_stack<T>(spec, s);
}

void write_image(const std::string& path, const Input<double>& pixels, int channels, int bits) {
  io::Image image;
  linv::Matrix<double> copy;
  image.pixels = linv::Matrix<double>::copy_of(column_major(pixels, copy));
  image.channels = channels;
  nb::gil_scoped_release released;
  io::write_image_channels(path, image, bits);
}

nb::dict formats() {
  nb::dict d;
  d["npy"] = true;
  d["mtx"] = true;
  d["npz"] = io::have_npz_support();
  d["mat"] = io::have_mat_support();
  d["png"] = io::have_png_support();
  d["jpeg"] = io::have_jpeg_support();
  d["tiff"] = io::have_tiff_support();
  d["pgm"] = true;
  d["nii"] = io::have_nifti_support();
  return d;
}

}  // namespace

void bind_io(nb::module_& m) {
  m.def("read_matrix", &read_matrix, nb::arg("spec"));
  m.def("read_stack", &read_stack, nb::arg("spec"));
  m.def("read_image", &read_image, nb::arg("path"), nb::arg("grey"));
  m.def("read_fmri", &read_fmri, nb::arg("path"), nb::arg("mask"));
  m.def("write_fmri", &write_fmri<double>, nb::arg("path"), nb::arg("values"), nb::arg("voxels"), nb::arg("space"));
  m.def("write_fmri", &write_fmri<float>, nb::arg("path"), nb::arg("values"), nb::arg("voxels"), nb::arg("space"));
  m.def("grid_space", &grid_space, nb::arg("nx"), nb::arg("ny"), nb::arg("nz"), nb::arg("voxel_mm"), nb::arg("tr"));
  m.def("write_matrix", &write_matrix<double>, nb::arg("spec"), nb::arg("a"));
  m.def("write_matrix", &write_matrix<float>, nb::arg("spec"), nb::arg("a"));
  m.def("write_matrix", &write_matrix<std::complex<double>>, nb::arg("spec"), nb::arg("a"));
  m.def("write_matrix", &write_matrix<std::complex<float>>, nb::arg("spec"), nb::arg("a"));
  m.def("write_stack", &write_stack<double>, nb::arg("spec"), nb::arg("at"));
  m.def("write_stack", &write_stack<float>, nb::arg("spec"), nb::arg("at"));
  m.def("write_image", &write_image, nb::arg("path"), nb::arg("pixels"), nb::arg("channels"), nb::arg("bits"));
  m.def("formats", &formats);
}

}  // namespace linv_py
