// _linv: linv's readers and writers (linv::io): matrices, stacks, images and fMRI runs by file extension.
// linv/io.py chooses among them.
#include "linv/io.hpp"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
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

nb::object read_matrix(const std::string& spec) {
  io::AnyMatrix m;
  {
    nb::gil_scoped_release released;
    m = io::read_matrix(spec);
  }
  if (auto* d = std::get_if<linv::Matrix<double>>(&m)) return numpy_object<double>(std::move(*d));
  return numpy_object<float>(std::move(std::get<linv::Matrix<float>>(m)));
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

nb::tuple read_fmri(const std::string& path, const std::string& mask) {
  io::FmriImage f;
  {
    nb::gil_scoped_release released;
    f = io::read_fmri(path, mask);
  }
  nb::dict space;
  space["shape"] = nb::make_tuple(f.space.nx, f.space.ny, f.space.nz);
  space["voxel_size"] = nb::make_tuple(f.space.dx, f.space.dy, f.space.dz);
  space["tr"] = f.space.tr;
  space["descrip"] = f.space.descrip;
  return nb::make_tuple(numpy_object<double>(std::move(f.signals)), vector_to_numpy<index>(f.voxels), space);
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
  m.def("write_matrix", &write_matrix<double>, nb::arg("spec"), nb::arg("a"));
  m.def("write_matrix", &write_matrix<float>, nb::arg("spec"), nb::arg("a"));
  m.def("write_stack", &write_stack<double>, nb::arg("spec"), nb::arg("at"));
  m.def("write_stack", &write_stack<float>, nb::arg("spec"), nb::arg("at"));
  m.def("write_image", &write_image, nb::arg("path"), nb::arg("pixels"), nb::arg("channels"), nb::arg("bits"));
  m.def("formats", &formats);
}

}  // namespace linv_py
