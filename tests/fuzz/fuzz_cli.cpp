// libFuzzer target: the command line, run in-process through linv::cli::run. The first byte picks a command,
// the second the format of its input among those the command reads, the next three choose the command's
// options (two bits per group of alternatives: none, or one of up to three); the rest is the input file, which
// fills every input slot of the command. Outputs go to a scratch directory. Whatever the bytes, linv must end
// with a documented exit code: 1 (an internal error) and 5 (out of memory; no option here asks for a GPU) are
// findings, as are crashes, sanitizer reports and exceptions escaping run().
#include <vector>

#include "fuzz.hpp"
#include "run.hpp"

namespace {

using Words = std::vector<std::string>;

// What a command reads, and so which file names its input may take.
enum class Reads { matrix, image, signals, stack };

const Words& extensions(Reads r) {
  static const Words matrix = {".npy", ".mtx", ".mat"}, image = {".png", ".pgm", ".npy"},
                     signals = {".npy", ".mtx", ".mat", ".nii"}, stack = {".npy", ".mat"};
  switch (r) {
    case Reads::matrix: return matrix;
    case Reads::image: return image;
    case Reads::signals: return signals;
    case Reads::stack: return stack;
  }
  return matrix;
}

// "IN" stands for the input file and "OUT/" for the scratch directory.
struct Command {
  Reads reads;
  Words base;
  std::vector<std::vector<Words>> groups;  // at most three alternatives each
};

const Words report = {"--report", "OUT/report.json"};

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {Reads::matrix,
       {"inv", "IN"},
       {{{"-o", "OUT/x.npy"}, {"-o", "OUT/x.mtx"}, {"-o", "OUT/x.mat"}},
        {{"--method", "lu"}, {"--method", "cholesky"}, {"--method", "gauss-jordan"}},
        {{"--method", "gauss-seidel", "--max-iter", "20"}, {"--method", "calu"}, {"--method", "rbt"}},
        {{"--precision", "single"}, {"--precision", "double"}, {"--precision", "mixed"}},
        {{"--batch"}, {"--method", "triangular"}, {"--method", "cholesky-gets"}},
        {{"--allow-ill-conditioned"}},
        {{"--no-check"}},
        {report}}},
      {Reads::matrix,
       {"solve", "IN", "IN"},
       {{{"-o", "OUT/x.npy"}, {"-o", "OUT/x.mtx"}},
        {{"--method", "lu"}, {"--method", "cholesky"}, {"--method", "gauss-jordan"}},
        {{"--method", "gauss-seidel", "--max-iter", "20"}, {"--method", "rbt"}, {"--batch"}},
        {{"--precision", "single"}, {"--precision", "mixed"}, {"--precision", "mixed", "--factor", "float32"}},
        {{"--allow-ill-conditioned"}},
        {report}}},
      {Reads::matrix,
       {"lstsq", "IN", "IN"},
       {{{"-o", "OUT/x.npy"}}, {{"--rcond", "0.001"}, {"--rcond", "0"}}, {{"--precision", "single"}}, {report}}},
      {Reads::matrix,
       {"pinv", "IN"},
       {{{"-o", "OUT/x.npy"}, {"-o", "OUT/x.mtx"}},
        {{"--structure", "bordered"}, {"--structure", "sparse", "--max-iter", "20"}, {"--structure", "dense"}},
        {{"--apply", "IN"}},
        {{"--dense-cols", "2"}, {"--dense-cols", "0"}},
        {{"--damping", "0.5"}},
        {{"--rcond", "0.1"}},
        {{"--precision", "single"}},
        {report}}},
      {Reads::matrix, {"chol", "IN"}, {{{"-o", "OUT/l.npy"}}, {{"--precision", "single"}}, {{"--no-check"}}, {report}}},
      {Reads::matrix,
       {"wls", "IN", "IN", "IN"},
       {{{"-o", "OUT/x.npy"}},
        {{"--weights", "d"}},
        {{"--storage", "packed"}},
        {{"--precision", "mixed", "--max-iter", "2"}, {"--precision", "single"}},
        {report}}},
      {Reads::image,
       {"degrade", "IN"},
       {{{"-o", "OUT/g.pgm"}, {"-o", "OUT/g.png"}, {"-o", "OUT/g.npy"}},
        {{"--psf", "box:size=3"}, {"--psf", "motion:len=3,angle=30"}, {"--psf", "IN"}},
        {{"--noise", "gaussian:var=0.001"}, {"--noise", "saltpepper:density=0.05"}, {"--noise", "poisson"}},
        {{"--boundary", "periodic"}, {"--boundary", "zero"}},
        {{"--crop", "1"}},
        {{"--truth", "OUT/t.png"}},
        {{"--bits", "8"}}}},
      {Reads::image,
       {"deblur", "IN"},
       {{{"-o", "OUT/f.png"}, {"-o", "OUT/f.pgm"}, {"-o", "OUT/f.npy"}},
        {{"--path", "spectral"}, {"--path", "matrix-free", "--max-iter", "5"}, {"--path", "auto"}},
        {{"--psf", "IN"}, {"--psf", "disk:radius=2"}, {"--psf", "sharpen:alpha=0.5"}},
        {{"--lambda", "0.01"}, {"--lambda", "0"}},
        {{"--robust", "on"}, {"--robust", "off"}},
        {{"--regularizer", "gradient"}, {"--regularizer", "identity"}},
        {{"--boundary", "periodic"}, {"--boundary", "zero"}},
        {{"--truth", "IN"}},
        {{"--bits", "8"}},
        {report}}},
      {Reads::signals,
       {"omp", "IN", "IN", "--sparsity", "2"},
       {{{"--codes", "OUT/g.npy"}, {"--codes", "OUT/g.mtx"}},
        {{"--mask", "IN"}},
        {{"--tol", "0.1"}},
        {{"--precision", "single"}},
        {report}}},
      {Reads::signals,
       {"ksvd", "IN", "-k", "2", "--sparsity", "1", "--iters", "2"},
       {{{"--dictionary", "OUT/d.npy"}, {"--dictionary", "OUT/d.mat"}},
        {{"--codes", "OUT/g.npy"}, {"--codes", "OUT/g.mtx"}},
        {{"--maps", "OUT/m.nii"}, {"--maps", "OUT/m.nii.gz"}},
        {{"--mask", "IN"}},
        {{"--initial", "IN"}},
        {{"--approximate"}},
        {{"--no-clear"}},
        {{"--precision", "single"}},
        {report}}},
      {Reads::signals,
       {"adl", "IN", "-k", "2", "--iters", "2"},
       {{{"--dictionary", "OUT/d.npy"}},
        {{"--codes", "OUT/s.npy"}, {"--codes", "OUT/s.mtx"}},
        {{"--task", "IN"}},
        {{"--initial", "IN"}},
        {{"--lambda", "0"}, {"--lambda", "0.5"}},
        {{"--c", "0.5"}},
        {{"--tol", "0.1"}},
        {{"--precision", "single"}},
        {report}}},
      {Reads::stack,
       {"parafac2", "IN", "--iters", "3"},
       {{{"-o", "OUT/parafac2"}},
        {{"IN"}},
        {{"-F", "1"}, {"-F", "2"}},
        {{"--init", "random"}, {"--init", "svd"}},
        {{"--tol", "0"}},
        {{"--precision", "single"}},
        {report}}},
  };
  return all;
}

// Dense sizes and image sizes one input may ask for: enough for every branch, small enough for thousands
// of runs a minute.
constexpr double kMaxCoordinateElements = 1 << 16;
constexpr double kMaxPngPixels = 1 << 12;

// A PNG's size, from its header (the first chunk, IHDR, at a fixed place), or 0 when there is none.
double png_pixels(const std::vector<std::uint8_t>& png) {
  if (png.size() < 24) return 0;
  const auto field = [&png](std::size_t at) {
    return std::uint32_t{png[at]} << 24 | std::uint32_t{png[at + 1]} << 16 | std::uint32_t{png[at + 2]} << 8 |
           std::uint32_t{png[at + 3]};
  };
  return static_cast<double>(field(16)) * static_cast<double>(field(20));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kPrefix = 5;
  if (size < kPrefix) return -1;
  const Command& command = commands()[data[0] % commands().size()];
  const Words& names = extensions(command.reads);
  const std::string& extension = names[data[1] % names.size()];
  std::vector<std::uint8_t> file(data + kPrefix, data + size);
  if (extension == ".mtx" &&
      linv::fuzz::declared_coordinate_elements({reinterpret_cast<const char*>(file.data()), file.size()}) >
          kMaxCoordinateElements)
    return -1;
  if (extension == ".png") {
    linv::fuzz::fix_png_crcs(file);
    if (png_pixels(file) > kMaxPngPixels) return -1;
  }
  const std::string input = linv::fuzz::write_input("input" + extension, file.data(), file.size());
  const std::string out = linv::fuzz::scratch().file("");

  Words words = {"linv"};
  const auto add = [&](const Words& w) {
    for (const std::string& word : w)
      words.push_back(word == "IN" ? input : word.starts_with("OUT/") ? out + word.substr(4) : word);
  };
  add(command.base);
  const std::uint32_t choices = std::uint32_t{data[2]} | std::uint32_t{data[3]} << 8 | std::uint32_t{data[4]} << 16;
  for (std::size_t g = 0; g < command.groups.size() && g < 12; ++g) {
    const std::size_t pick = (choices >> (2 * g)) & 3;
    if (pick > 0 && pick <= command.groups[g].size()) add(command.groups[g][pick - 1]);
  }

  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int rc = 0;
  try {
    rc = linv::cli::run(static_cast<int>(words.size()), argv.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linv fuzz: run() let an exception escape: %s\n", e.what());
    std::abort();
  }
  if (rc == 1 || rc == 5) {
    std::string line;
    for (const std::string& w : words) line += " " + w;
    std::fprintf(stderr, "linv fuzz: exit %d from%s\n", rc, line.c_str());
    std::abort();
  }
  return 0;
}
