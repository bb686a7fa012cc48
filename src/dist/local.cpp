// The communicator of jobs linv starts itself on one machine (Grid::local): the calling process is rank 0
// and runs the same executable again, with the same arguments, once for every other rank; the workers
// find their rank in LINV_LOCAL_JOB and connect to the root's Unix socket. The root is the hub of a star:
// collectives go through it, and point-to-point messages have the root at one end (all that linv's
// scatter, gather and agreement need). No MPI is involved, so a workstation with several GPUs needs none.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "linv/errors.hpp"

extern char** environ;

namespace linv::dist::detail {
namespace {

constexpr const char* kJobVariable = "LINV_LOCAL_JOB";  // "rank size socket-path" in a worker
constexpr int kStartSeconds = 120;                      // for the workers to start and connect

[[noreturn]] void fail(const std::string& what) {
  throw DeviceError(fmt::format("local job: {}: {}", what, std::strerror(errno)));
}

void write_all(int fd, const void* data, std::size_t bytes, int peer) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t done = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) throw DeviceError(fmt::format("local job: process {} is gone ({})", peer, std::strerror(errno)));
    p += done, bytes -= static_cast<std::size_t>(done);
  }
}

void read_all(int fd, void* data, std::size_t bytes, int peer) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t done = ::recv(fd, p, bytes, 0);
    if (done < 0 && errno == EINTR) continue;
    if (done == 0) throw DeviceError(fmt::format("local job: process {} stopped", peer));
    if (done < 0) fail(fmt::format("reading from process {}", peer));
    p += done, bytes -= static_cast<std::size_t>(done);
  }
}

// This program's own command line, as the kernel has it.
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t start = 0; start < all.size();) {
    const std::size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

template <class V>
void reduce_into(V* into, const V* from, std::size_t count, Reduction op) {
  for (std::size_t i = 0; i < count; ++i) switch (op) {
      case Reduction::sum: into[i] += from[i]; break;
      case Reduction::max: into[i] = std::max(into[i], from[i]); break;
      case Reduction::min: into[i] = std::min(into[i], from[i]); break;
    }
}

class LocalJob final : public Communicator {
 public:
  // The root: starts size - 1 workers and waits for each to connect.
  explicit LocalJob(int size) : rank_(0), size_(size), peers_(static_cast<std::size_t>(size), -1) {
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) fail("socket");
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path_ = fmt::format("/tmp/linv-job-{}-{:x}.sock", ::getpid(), std::random_device{}());
    std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener, size) != 0) {
      ::close(listener);
      fail("listening on " + path_);
    }
    const std::vector<std::string> args = own_arguments();
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (int r = 1; r < size; ++r) {
      std::vector<std::string> env;
      for (char** e = environ; *e != nullptr; ++e)
        if (!std::string(*e).starts_with(std::string(kJobVariable) + "=")) env.emplace_back(*e);
      env.push_back(fmt::format("{}={} {} {}", kJobVariable, r, size, path_));
      std::vector<char*> envp;
      for (std::string& e : env) envp.push_back(e.data());
      envp.push_back(nullptr);
      pid_t pid = 0;
      if (const int error = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data());
          error != 0) {
        errno = error;
        ::close(listener);
        fail("starting process " + std::to_string(r));
      }
      children_.push_back(pid);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStartSeconds);
    for (int connected = 1; connected < size;) {
      pollfd waiting{listener, POLLIN, 0};
      const int ready = ::poll(&waiting, 1, 1000);
      if (ready < 0 && errno != EINTR) fail("waiting for the workers");
      if (ready > 0) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) fail("accepting a worker");
        int rank = -1;
        read_all(fd, &rank, sizeof rank, -1);
        if (rank < 1 || rank >= size || peers_[static_cast<std::size_t>(rank)] >= 0) {
          ::close(fd);
          continue;
        }
        peers_[static_cast<std::size_t>(rank)] = fd;
        ++connected;
        continue;
      }
      for (pid_t pid : children_) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid)
          throw DeviceError(fmt::format("local job: a worker exited ({}) before it joined the job",
                                        WIFEXITED(status) ? fmt::format("status {}", WEXITSTATUS(status))
                                                          : fmt::format("signal {}", WTERMSIG(status))));
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw DeviceError(fmt::format("local job: the workers did not join within {} s", kStartSeconds));
    }
    ::close(listener);
    ::unlink(path_.c_str());
  }

  // A worker: connects to the root.
  LocalJob(int rank, int size, const std::string& path)
      : rank_(rank), size_(size), peers_(1, -1) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the root
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      fail("connecting to " + path);
    }
    peers_[0] = fd;
    write_all(fd, &rank_, sizeof rank_, 0);
  }

  // The root waits for its workers. They end with the job's own exit code (errors are agreed), so one that
  // died by a signal or ended otherwise (a sanitizer's report, say) fails the job: the root says which and
  // exits with 1, whatever it was about to return.
  ~LocalJob() override {
    for (int fd : peers_)
      if (fd >= 0) ::close(fd);  // the workers see the end of their connection and finish
    bool failed = false;
    for (std::size_t r = 0; r < children_.size(); ++r) {
      int status = 0;
      while (::waitpid(children_[r], &status, 0) < 0 && errno == EINTR) {
      }
      const bool agreed = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || (WEXITSTATUS(status) >= 2 &&
                                                                           WEXITSTATUS(status) <= 5));
      if (agreed) continue;
      failed = true;
      std::fprintf(stderr, "linv: process %zu of the local job %s %d\n", r + 1,
                   WIFSIGNALED(status) ? "died by signal" : "ended with status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    if (failed) std::_Exit(1);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return rank_; }
  int local_size() const override { return size_; }
  std::string name() const override { return "linv's local launcher"; }
  bool is_mpi_world() const override { return false; }

  void barrier() const override {
    long long nothing = 0;
    all_reduce(&nothing, 1, Reduction::sum);
  }
  void all_reduce(double* values, std::size_t count, Reduction op) const override { reduce(values, count, op); }
  void all_reduce(long long* values, std::size_t count, Reduction op) const override { reduce(values, count, op); }

  void broadcast(void* data, std::size_t bytes, int root) const override {
    if (rank_ == 0) {
      if (root != 0) read_all(peer(root), data, bytes, root);
      for (int r = 1; r < size_; ++r)
        if (r != root) write_all(peer(r), data, bytes, r);
    } else if (rank_ == root) {
      write_all(peer(0), data, bytes, 0);
    } else {
      read_all(peer(0), data, bytes, 0);
    }
  }

  void send(int to, const void* data, std::size_t bytes) const override {
    require_root_between(rank_, to);
    write_all(peer(to), data, bytes, to);
  }
  void receive(int from, void* data, std::size_t bytes) const override {
    require_root_between(rank_, from);
    read_all(peer(from), data, bytes, from);
  }

 private:
  int peer(int rank) const { return peers_[rank_ == 0 ? static_cast<std::size_t>(rank) : 0]; }
  static void require_root_between(int a, int b) {
    if (a != 0 && b != 0)
      throw DeviceError(fmt::format("local job: processes {} and {} cannot talk directly (the root relays)", a, b));
  }
  template <class V>
  void reduce(V* values, std::size_t count, Reduction op) const {
    const std::size_t bytes = count * sizeof(V);
    if (rank_ != 0) {
      write_all(peer(0), values, bytes, 0);
      read_all(peer(0), values, bytes, 0);
      return;
    }
    std::vector<V> theirs(count);
    for (int r = 1; r < size_; ++r) {
      read_all(peer(r), theirs.data(), bytes, r);
      reduce_into(values, theirs.data(), count, op);
    }
    for (int r = 1; r < size_; ++r) write_all(peer(r), values, bytes, r);
  }

  int rank_, size_;
  std::vector<int> peers_;  // the root: a socket per rank (its own unused); a worker: the root's
  std::vector<pid_t> children_;
  std::string path_;
};

}  // namespace

std::shared_ptr<const Communicator> local_job(int size) {
  static std::mutex mutex;
  static std::shared_ptr<const Communicator> job;
  const std::lock_guard<std::mutex> lock(mutex);
  if (job) {
    if (job->size() != size)
      throw InvalidArgument(fmt::format("this program already runs a local job of {} processes, not {}", job->size(), size));
    return job;
  }
  if (size < 1) throw InvalidArgument(fmt::format("a local job needs at least one process, not {}", size));
  if (const char* spec = std::getenv(kJobVariable)) {
    int rank = -1, their_size = 0;
    char path[256] = {};
    if (std::sscanf(spec, "%d %d %255s", &rank, &their_size, path) != 3 || their_size != size)
      throw DeviceError(fmt::format("{}='{}' does not describe a job of {} processes", kJobVariable, spec, size));
    job = std::make_shared<LocalJob>(rank, size, path);
  } else {
    job = std::make_shared<LocalJob>(size);
  }
  return job;
}

}  // namespace linv::dist::detail
