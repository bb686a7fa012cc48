// The format-independent half of linv's file I/O: choosing the format from the file name, element-type
// conversion, and the file plumbing shared by the formats (reading, atomic writing).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "io/formats.hpp"
#include "io/temporary_files.hpp"
#include "linv/errors.hpp"

namespace linv::io {

namespace {
thread_local OutputTransaction* active_transaction = nullptr;
}  // namespace

struct OutputTransactionAccess {
  // Hands a written temporary file to this thread's transaction; false when there is none.
  static bool defer(const std::string& temp, const std::string& target, int listed) {
    if (active_transaction == nullptr) return false;
    active_transaction->pending_.push_back({temp, target, listed});
    return true;
  }
  static void rename_so_far() {
    if (active_transaction != nullptr) active_transaction->rename_pending();
  }
};

namespace detail {

// ---- InputFile ----

namespace {
// Standard input's bytes, read whole the first time a reader asks for "-", so that every later reader (a
// command that looks at a header again) finds them too.
const std::vector<unsigned char>& standard_input() {
  static const std::vector<unsigned char> bytes = [] {
    if (::isatty(STDIN_FILENO)) throw InputError("standard input ('-') is a terminal: pipe a .npy file into it");
    std::vector<unsigned char> all;
    unsigned char buffer[1 << 16];
    for (ssize_t got; (got = ::read(STDIN_FILENO, buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw InputError(fmt::format("could not read standard input: {}", std::strerror(errno)));
      all.insert(all.end(), buffer, buffer + got);
    }
    return all;
  }();
  return bytes;
}

// Where a '-' output goes once it is complete: the process's standard output, or the descriptor it was
// moved to by claim_standard_output.
int standard_output = STDOUT_FILENO;
bool standard_output_claimed = false;

// Moves a complete temporary file into place: renamed over its target, or for "-" copied to standard
// output and removed.
void place(const std::string& temp, const std::string& target, std::error_code& ec) {
  if (target != "-") return std::filesystem::rename(temp, target, ec);
  const int in = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    ec = std::error_code(errno, std::generic_category());
    return;
  }
  char buffer[1 << 16];
  for (ssize_t got; (got = ::read(in, buffer, sizeof buffer)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    for (ssize_t done = 0; got > 0 && done < got;) {
      const ssize_t put = ::write(standard_output, buffer + done, static_cast<std::size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        ec = std::error_code(errno, std::generic_category());
        ::close(in);
        return;
      }
      done += put;
    }
    if (got < 0) {
      ec = std::error_code(errno, std::generic_category());
      break;
    }
  }
  ::close(in);
  ::unlink(temp.c_str());
}
}  // namespace

InputFile::InputFile(const std::string& path) : path_(path) {
  if (path == "-") {  // standard input, read whole (the one way to read it twice)
    path_ = "standard input";
    bytes_ = standard_input();
    open_bytes();
    return;
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw InputError(fmt::format("could not read {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(::fileno(file_), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      std::fclose(file_);
      throw InputError(fmt::format("could not read {}: {}", path, std::strerror(EISDIR)));
    }
    if (S_ISREG(st.st_mode)) size_ = static_cast<std::int64_t>(st.st_size);
  }
}

InputFile::InputFile(std::string path, std::vector<unsigned char> bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {
  open_bytes();
}

void InputFile::open_bytes() {
  // fmemopen refuses an empty buffer: an empty member reads as an empty temporary file.
  file_ = bytes_.empty() ? std::tmpfile() : ::fmemopen(bytes_.data(), bytes_.size(), "rb");
  if (file_ == nullptr) throw InputError(fmt::format("could not read {}: {}", path_, std::strerror(errno)));
  size_ = static_cast<std::int64_t>(bytes_.size());
}

InputFile::~InputFile() { std::fclose(file_); }

std::size_t InputFile::read_some(void* dst, std::size_t bytes) {
  const std::size_t got = std::fread(dst, 1, bytes, file_);
  if (got < bytes && std::ferror(file_))
    throw InputError(fmt::format("could not read {}: {}", path_, std::strerror(errno)));
  offset_ += static_cast<std::int64_t>(got);
  return got;
}

void InputFile::seek(std::int64_t offset) {
  if (::fseeko(file_, offset, SEEK_SET) != 0)
    throw InputError(fmt::format("could not read {}: {}", path_, std::strerror(errno)));
  offset_ = offset;
}

// ---- AtomicFile ----

std::filesystem::path written_path(const std::string& target) {
  namespace fs = std::filesystem;
  fs::path p = target;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) break;
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return p;
}

AtomicFile::AtomicFile(std::string target)
    : target_(std::move(target)), destination_(target_ == "-" ? target_ : written_path(target_).string()) {
  // standard output's bytes wait in a temporary file of their own until the output is placed
  const std::filesystem::path target_path =
      target_ == "-" ? std::filesystem::temp_directory_path() / "standard-output" : std::filesystem::path(destination_);
  // Names near NAME_MAX would overflow it once decorated; the temporary name only has to be unique.
  const std::string name = target_path.filename().string().substr(0, 200);
  std::random_device random;
  // O_EXCL: never clobber a file that happens to carry the name; retry on the (unlikely) collision.
  int fd = -1;
  int error = 0;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    const std::string temp_name = fmt::format(".{}.tmp-{}-{:08x}", name, ::getpid(), random());
    temp_ = (target_path.parent_path() / temp_name).string();
    // Listed before it exists, so a fatal signal at any moment after the open finds it and removes it.
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(temp_, ec);
    listed_ = list_temporary(ec ? temp_ : absolute.string());
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    error = errno;
    if (fd < 0) forget_temporary(std::exchange(listed_, -1));
    if (fd < 0 && error != EEXIST) break;
  }
  if (fd < 0) fail(std::strerror(error));
  // A signal handler removed the temporary files while this one was being created: the process is ending,
  // and this file must not outlive it.
  if (temporary_files_removed()) ::unlink(temp_.c_str());
  // The file it replaces keeps its permissions (a 0600 output stays private); a new one gets the umask's.
  struct stat existing {};
  if (target_ != "-" && ::stat(destination_.c_str(), &existing) == 0 && S_ISREG(existing.st_mode))
    (void)::fchmod(fd, existing.st_mode & 07777);
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    error = errno;
    ::close(fd);
    ::unlink(temp_.c_str());
    forget_temporary(std::exchange(listed_, -1));
    fail(std::strerror(error));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) ::unlink(temp_.c_str());
  forget_temporary(listed_);  // after the unlink: a signal in between only repeats it
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) fail(std::strerror(errno));
}

void AtomicFile::close_handle() {
  std::FILE* f = std::exchange(file_, nullptr);
  if (f != nullptr && std::fclose(f) != 0) fail(std::strerror(errno));
}

// No fsync: the rename makes the write atomic for readers and against failures of this process, which is
// what linv promises; surviving a power cut is left to the file system's own ordering.
void AtomicFile::commit() {
  close_handle();
  if (OutputTransactionAccess::defer(temp_, destination_, listed_)) {  // renamed by the transaction's commit
    committed_ = true;
    listed_ = -1;
    return;
  }
  std::error_code ec;
  place(temp_, destination_, ec);
  if (ec) fail(ec.message());
  committed_ = true;
  forget_temporary(std::exchange(listed_, -1));  // after the rename: a signal in between removes nothing
}

void AtomicFile::fail(const std::string& reason) const {
  throw InputError(fmt::format("could not write {}: {}", target_ == "-" ? "standard output" : target_, reason));
}

}  // namespace detail

OutputTransaction::OutputTransaction() {
  if (active_transaction != nullptr) throw InvalidArgument("an output transaction is already open on this thread");
  active_transaction = this;
}

OutputTransaction::~OutputTransaction() {
  active_transaction = nullptr;
  for (const Pending& p : pending_) {
    ::unlink(p.temp.c_str());
    detail::forget_temporary(p.listed);  // after the unlink: a signal in between only repeats it
  }
}

void OutputTransaction::commit() {
  active_transaction = nullptr;
  rename_pending();
}

void commit_outputs_so_far() { OutputTransactionAccess::rename_so_far(); }

namespace {
// The file of a spec, without the variable of a .mat or .npz ("file.mat:x" is file.mat).
std::string file_part(const std::string& spec);
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  if (a == "-" || b == "-" || a.empty() || b.empty()) return false;
  auto resolved = [](const std::string& spec) {
    std::error_code ec;
    const fs::path written = detail::written_path(file_part(spec));
    const fs::path canonical = fs::weakly_canonical(fs::absolute(written, ec), ec);
    return ec ? fs::absolute(written, ec).lexically_normal() : canonical;
  };
  const fs::path pa = resolved(a), pb = resolved(b);
  if (pa == pb) return true;
  std::error_code ec;
  return fs::exists(pa, ec) && fs::exists(pb, ec) && fs::equivalent(pa, pb, ec);
}

void OutputTransaction::rename_pending() {
  // Standard output first: copying to it is what fails (a full disk behind a pipe, a closed reader), and a
  // failure there must leave every file output as it was; renames within a directory rarely fail.
  std::stable_partition(pending_.begin(), pending_.end(), [](const Pending& p) { return p.target == "-"; });
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    std::error_code ec;
    detail::place(p.temp, p.target, ec);
    if (ec)  // the rest removed
      throw InputError(fmt::format("could not write {}: {}", p.target == "-" ? "standard output" : p.target, ec.message()));
    detail::forget_temporary(p.listed);
    pending_.erase(pending_.begin());
  }
}

namespace {

enum class Format { npy, npz, mtx, mat };

// One entry per matrix file format: what the spec parser, the error that lists the formats and the output
// check know of it. Its reader and writer are the cases of Format in the functions below, one file each
// (npy.cpp, npz.cpp, mtx.cpp, mat.cpp), so a new format is that file, this line and those cases.
struct FormatEntry {
  Format format;
  std::string_view extension;  // lower case, with the dot
  std::string_view described;  // for the error that lists them
  bool names_variables;        // "file.ext:NAME" picks one of several arrays
  bool (*built)();             // nullptr: always built in
  std::string_view library;    // what it needs where `built` says no
};
constexpr FormatEntry kFormats[] = {
    {Format::npy, ".npy", "NumPy", false, nullptr, ""},
    {Format::npz, ".npz", "NumPy archives; file.npz:NAME picks an array", true, have_npz_support, "zlib"},
    {Format::mtx, ".mtx", "Matrix Market", false, nullptr, ""},
    {Format::mat, ".mat", "MATLAB; file.mat:NAME picks a variable", true, have_mat_support, "matio"},
};

const FormatEntry& entry(Format format) {
  for (const FormatEntry& e : kFormats)
    if (e.format == format) return e;
  throw std::logic_error("io: a format without an entry in kFormats");
}

// ".npy (NumPy), .npz (NumPy archives; ...), .mtx (Matrix Market) and .mat (MATLAB; ...)"
std::string listed_formats() {
  std::string out;
  for (std::size_t k = 0; k < std::size(kFormats); ++k) {
    if (k > 0) out += k + 1 == std::size(kFormats) ? " and " : ", ";
    out += fmt::format("{} ({})", kFormats[k].extension, kFormats[k].described);
  }
  return out;
}

// A spec split into the file, its format and (for .mat and .npz) the variable.
struct Target {
  std::string path;
  Format format;
  std::string variable;
};

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool names_variables(const std::string& path) {
  const std::string lower = lowercase(path);
  for (const FormatEntry& e : kFormats)
    if (e.names_variables && lower.ends_with(e.extension)) return true;
  return false;
}

// Directories may contain ':'; only one in the file name, right after ".mat" or ".npz", introduces a
// variable.
std::string file_part(const std::string& spec) {
  const std::size_t slash = spec.rfind('/');
  const std::size_t name_begin = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t colon = spec.rfind(':');
  if (colon != std::string::npos && colon >= name_begin && names_variables(spec.substr(0, colon)))
    return spec.substr(0, colon);
  return spec;
}

Target parse_spec(const std::string& spec) {
  Target t{file_part(spec), Format::npy, {}};
  if (t.path.size() < spec.size()) {
    t.variable = spec.substr(t.path.size() + 1);
    if (t.variable.empty())
      throw InvalidArgument(
          fmt::format("'{}' names no variable after the ':' (write {}:NAME, or leave the ':' out)", spec, t.path));
  }
  if (spec == "-") return t;  // standard input or output: a .npy stream
  const std::string extension = lowercase(std::filesystem::path(t.path).extension().string());
  for (const FormatEntry& e : kFormats)
    if (e.extension == extension) {
      t.format = e.format;
      return t;
    }
  throw InvalidArgument(fmt::format("cannot tell the file format of '{}' from its extension: linv reads and writes {}",
                                    spec, listed_formats()));
}

// The .npy file a spec of format npy or npz names: the file, or the archive's member.
detail::InputFile npy_source(const Target& t) {
  if (t.format == Format::npz) return detail::npz_member(t.path, t.variable);
  return detail::InputFile(t.path);
}

template <Real T>
MatrixStack<T> stack_of_one(Matrix<T>&& m) {
  MatrixStack<T> s{1, m.rows(), m.cols(), {}};
  s.data.assign(m.data(), m.data() + m.size());
  return s;
}

}  // namespace

const char* to_string(DType t) { return t == DType::Float32 ? "float32" : "float64"; }

namespace {
thread_local std::vector<std::string> input_notes;
}  // namespace

void detail::add_input_note(std::string note) {
  constexpr std::size_t kKept = 32;  // a long-lived caller that never takes them holds no more
  if (input_notes.size() == kKept) input_notes.erase(input_notes.begin());
  input_notes.push_back(std::move(note));
}

std::vector<std::string> take_input_notes() { return std::exchange(input_notes, {}); }

AnyMatrix read_matrix(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy(in);
  }
  if (t.format == Format::mtx) return detail::read_mtx(t.path);
  return detail::read_mat(t.path, t.variable);
}

AnySparse read_sparse(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::mtx) return detail::read_mtx_sparse(t.path);
  return std::visit([]<Real T>(const Matrix<T>& A) -> AnySparse { return SparseMatrix<T>::from_dense(A.view()); },
                    read_matrix(spec));
}

AnyStack read_stack(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_stack(in);
  }
  if (t.format == Format::mtx)
    return std::visit([](auto&& m) -> AnyStack { return stack_of_one(std::move(m)); }, detail::read_mtx(t.path));
  return detail::read_mat_stack(t.path, t.variable);
}

namespace {

void require_part(const char* reader, int part, int parts) {
  if (parts < 1 || part < 0 || part >= parts)
    throw InvalidArgument(fmt::format("{}: part {} of {} does not exist", reader, part, parts));
}

}  // namespace

StackPart read_stack_part(const std::string& spec, int part, int parts) {
  require_part("read_stack_part", part, parts);
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_stack_part(in, part, parts);
  }
  return detail::part_of(read_stack(spec), part, parts);
}

ColumnPart read_matrix_columns(const std::string& spec, int part, int parts) {
  require_part("read_matrix_columns", part, parts);
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_columns(in, part, parts);
  }
  return detail::columns_of(read_matrix(spec), part, parts);
}

namespace detail {

index part_begin(index total, int part, int parts) { return total * part / parts; }

ColumnPart columns_of(AnyMatrix&& whole, int part, int parts) {
  return std::visit(
      [&]<Real T>(Matrix<T>& m) -> ColumnPart {
        const index first = part_begin(m.cols(), part, parts), last = part_begin(m.cols(), part + 1, parts);
        return {Matrix<T>::copy_of(m.view().block(0, first, m.rows(), last - first)), first, m.cols()};
      },
      whole);
}

StackPart part_of(AnyStack&& whole, int part, int parts) {
  return std::visit(
      [&]<Real T>(MatrixStack<T>& s) -> StackPart {
        const index total = s.count, first = part_begin(total, part, parts);
        const index count = part_begin(total, part + 1, parts) - first, slice = s.rows * s.cols;
        MatrixStack<T> mine{count, s.rows, s.cols, {}};
        mine.data.assign(s.data.begin() + first * slice, s.data.begin() + (first + count) * slice);
        return {std::move(mine), first, total};
      },
      whole);
}

}  // namespace detail

template <Real T>
void write_matrix(const std::string& spec, ConstMatrixView<T> A) {
  require_host(A.device(), "write_matrix");
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy(t.path, A);
    case Format::npz:  // one array, named as numpy.savez names a positional one unless the spec names it
      return detail::write_npz<T>(t.path, {{t.variable.empty() ? std::string("arr_0") : t.variable, A}});
    case Format::mtx:
      return detail::write_mtx(t.path, A);
    case Format::mat:
      return detail::write_mat(t.path, t.variable, A);
  }
}

template <Real T>
void write_sparse(const std::string& spec, const SparseMatrix<T>& S) {
  const Target t = parse_spec(spec);
  if (t.format == Format::mtx) return detail::write_mtx_sparse(t.path, S);
  const Matrix<T> dense = S.to_dense();
  write_matrix<T>(spec, dense.view());
}
template void write_sparse<float>(const std::string&, const SparseMatrix<float>&);
template void write_sparse<double>(const std::string&, const SparseMatrix<double>&);

void check_output(const std::string& spec, OutputKind kind) {
  std::string path = spec;
  switch (kind) {
    case OutputKind::matrix: {
      const Target t = parse_spec(spec);
      const FormatEntry& e = entry(t.format);
      if (e.built && !e.built())
        throw InvalidArgument(fmt::format("{}: linv was built without {}, so it cannot write {} files (use .npy)", spec,
                                          e.library, e.extension));
      path = t.path;
      break;
    }
    case OutputKind::image: {
      const std::string lower = lowercase(spec);
      if (spec == "-") return;  // a .npy image on standard output
      if (!lower.ends_with(".png") && !lower.ends_with(".pgm") && !lower.ends_with(".npy"))
        throw InvalidArgument(fmt::format("{}: images are written to .png, .pgm or .npy files", spec));
      if (lower.ends_with(".png") && !have_png_support())
        throw InvalidArgument(fmt::format("{}: linv was built without libpng, so it cannot write .png (use .pgm or "
                                          ".npy)",
                                          spec));
      break;
    }
    case OutputKind::nifti:
      if (spec == "-") throw InvalidArgument("NIfTI images are not written to standard output ('-'): name a file");
      if (!is_nifti_path(spec))
        throw InvalidArgument(fmt::format("{}: NIfTI images are written to .nii or .nii.gz files", spec));
      if (!have_nifti_support())
        throw InvalidArgument(fmt::format("{}: linv was built without NIfTI support (libnifti2)", spec));
      break;
    case OutputKind::text:
      if (spec == "-") return;
      break;
    case OutputKind::directory: {
      if (spec == "-") throw InvalidArgument("a directory output cannot be standard output ('-'): name a directory");  // made when missing: its nearest existing ancestor must take it
      std::filesystem::path p = std::filesystem::absolute(spec);
      std::error_code ec;
      while (!std::filesystem::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
      if (!std::filesystem::is_directory(p, ec))
        throw InputError(fmt::format("could not write into {}: {} is not a directory", spec, p.string()));
      if (::access(p.c_str(), W_OK) != 0)
        throw InputError(fmt::format("could not write into {}: {} is not writable ({})", spec, p.string(),
                                     std::strerror(errno)));
      return;
    }
  }
  if (path == "-") return;  // standard output: no directory to check
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path folder = parent.empty() ? std::filesystem::path(".") : parent;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError(fmt::format("could not write {}: the directory {} does not exist", spec, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(fmt::format("could not write {}: the directory {} is not writable ({})", spec, folder.string(),
                                 std::strerror(errno)));
}

void claim_standard_output() {
  if (std::exchange(detail::standard_output_claimed, true))
    throw InvalidArgument("only one output can be standard output ('-')");
  std::fflush(stdout);
  const int saved = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw InputError(fmt::format("could not set standard output aside: {}", std::strerror(errno)));
  detail::standard_output = saved;
}

void make_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(fmt::format("could not create the directory {}: {}", path, ec.message()));
}

bool is_vector(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format != Format::npy && t.format != Format::npz) return false;
  detail::InputFile in = npy_source(t);
  return detail::npy_dimensions(in) == 1;
}

template <Real T>
void write_vector(const std::string& spec, ConstMatrixView<T> v) {
  require_host(v.device(), "write_vector");
  if (v.cols() != 1)
    throw InvalidArgument(fmt::format("write_vector: {} is not one column", shape_string(v.rows(), v.cols())));
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy(t.path, v, /*vector=*/true);
    case Format::npz:
      return detail::write_npz<T>(t.path, {{t.variable.empty() ? std::string("arr_0") : t.variable, v}},
                                  /*vectors=*/true);
    case Format::mtx:
    case Format::mat:
      return write_matrix<T>(spec, v);
  }
}

template <Real T>
void write_stack(const std::string& spec, const MatrixStack<T>& stack) {
  if (stack.count < 0 || stack.rows < 0 || stack.cols < 0 ||
      static_cast<index>(stack.data.size()) != stack.count * stack.rows * stack.cols)
    throw InvalidArgument(fmt::format("write_stack: a stack of {} matrices of {} needs {} elements, it holds {}",
                                      stack.count, shape_string(stack.rows, stack.cols),
                                      stack.count * stack.rows * stack.cols, stack.data.size()));
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy_stack(t.path, stack);
    case Format::npz:
      throw InvalidArgument(fmt::format("{}: linv writes stacks of matrices as .npy or .mat, not into .npz archives",
                                        spec));
    case Format::mtx:
      if (stack.count != 1)
        throw InvalidArgument(
            fmt::format("{}: a Matrix Market file holds one matrix, the stack has {}; write "
                        "stacks as .npy or .mat",
                        spec, stack.count));
      return detail::write_mtx(t.path, stack[0]);
    case Format::mat:
      return detail::write_mat_stack(t.path, t.variable, stack);
  }
}

template <Real T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays) {
  detail::write_npz<T>(path, arrays);
}

void write_text(const std::string& path, const std::string& text) {
  detail::AtomicFile out(path);
  out.write(text);
  out.commit();
}

bool have_npz_support() {
#ifdef LINV_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

bool have_mat_support() {
#ifdef LINV_HAVE_MATIO
  return true;
#else
  return false;
#endif
}

template <Real T>
Matrix<T> convert(AnyMatrix&& m, bool allow_narrowing) {
  if (auto* same = std::get_if<Matrix<T>>(&m)) return std::move(*same);
  if constexpr (std::same_as<T, double>) {
    return std::get<Matrix<float>>(m).template cast<double>();
  } else {
    if (!allow_narrowing)
      throw InvalidArgument(
          "the input holds float64 data; reading it as float32 loses precision: ask for single precision "
          "explicitly");
    return std::get<Matrix<double>>(m).template cast<float>();
  }
}

template void write_npz<float>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<float>>>&);
template void write_npz<double>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<double>>>&);
template void write_matrix<float>(const std::string&, ConstMatrixView<float>);
template void write_matrix<double>(const std::string&, ConstMatrixView<double>);
template void write_vector<float>(const std::string&, ConstMatrixView<float>);
template void write_vector<double>(const std::string&, ConstMatrixView<double>);
template void write_stack<float>(const std::string&, const MatrixStack<float>&);
template void write_stack<double>(const std::string&, const MatrixStack<double>&);
template Matrix<float> convert<float>(AnyMatrix&&, bool);
template Matrix<double> convert<double>(AnyMatrix&&, bool);

}  // namespace linv::io
