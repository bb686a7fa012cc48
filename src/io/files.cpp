// The file plumbing every format shares: reading files (and standard input), writing them atomically
// (temporary file, then rename), and output transactions. src/io/io.cpp chooses the format; the per-format
// files (npy.cpp, mtx.cpp, ...) read and write through these.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

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

void claim_standard_output() {
  if (std::exchange(detail::standard_output_claimed, true))
    throw InvalidArgument("only one output can be standard output ('-')");
  std::fflush(stdout);
  const int saved = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw InputError(fmt::format("could not set standard output aside: {}", std::strerror(errno)));
  detail::standard_output = saved;
}

}  // namespace linv::io
