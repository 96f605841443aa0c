// A main() for the fuzz targets without libFuzzer: runs the target once on
// every file named (directories: every file in them, sorted), so the seed
// corpora and the saved reproducers of tests/fuzz/ replay under ctest, in
// plain and sanitizer builds. A broken contract aborts, failing the test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) in_dir.push_back(e.path());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(arg)) {
      files.push_back(arg);
    }
    // A missing path is no input: a target may have no reproducers yet.
  }
  for (const auto& f : files) {
    // Named first, so the log of a crash says which input caused it.
    std::fprintf(stderr, "replay: %s\n", f.c_str());
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, all handled\n", files.size());
  return 0;
}
