#include "util/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::util {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomically, WritesReplacesAndLeavesNothingElse) {
  fs::path dir = test::temp_path("atomic_dir");
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  write_file_atomically(path, "first");
  EXPECT_EQ(read_text_file(path), "first");
  const std::string big(3 << 20, 'x');  // several write() calls' worth
  write_file_atomically(path, big);
  EXPECT_EQ(read_text_file(path), big);
  write_file_atomically(path, "");
  EXPECT_EQ(read_text_file(path), "");
  EXPECT_EQ(entries(dir), 1u);  // no temporary left beside it
}

TEST(WriteFileAtomically, HonoursTheUmaskLikeAPlainFile) {
  fs::path dir = test::temp_path("atomic_mode");
  fs::create_directories(dir);
  mode_t old = ::umask(022);
  write_file_atomically((dir / "f").string(), "x");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(WriteFileAtomically, AMissingDirectoryIsBadInputNamingThePath) {
  const std::string path = test::temp_path("no_such_dir") + "/out.json";
  try {
    write_file_atomically(path, "x");
    FAIL() << "wrote into a missing directory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(WriteFileAtomically, AFailedWriteKeepsTheOldFile) {
  fs::path dir = test::temp_path("atomic_keep");
  fs::create_directories(dir);
  const std::string path = (dir / "plan.json").string();
  write_file_atomically(path, "old");
  // The target is a directory now: the rename fails, the old content of
  // the other file stays and no temporary is left.
  const std::string blocked = (dir / "blocked").string();
  fs::create_directories(fs::path(blocked) / "inside");
  EXPECT_THROW(write_file_atomically(blocked, "new"), InputError);
  EXPECT_EQ(read_text_file(path), "old");
  EXPECT_EQ(entries(dir), 2u);
}

}  // namespace
}  // namespace memplan::util
