#include "core/atomic_file.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

TEST(AtomicFile, CommitWritesTheWholeFileAndLeavesNoTemp) {
  testing::TempDir dir;
  write_file_atomic(dir.file("a.bin"), std::string_view("hello"));
  auto f = MappedFile::open(dir.file("a.bin"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), f->size()), "hello");
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"a.bin"});
}

TEST(AtomicFile, AbandonedWriterLeavesPreviousContent) {
  testing::TempDir dir;
  write_file_atomic(dir.file("a.bin"), std::string_view("old"));
  {
    AtomicFileWriter w(dir.file("a.bin"));
    w.write(std::string_view("new but never committed"));
  }
  auto f = MappedFile::open(dir.file("a.bin"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), f->size()), "old");
  EXPECT_EQ(dir_entries(dir.path()).size(), 1u);
}

TEST(AtomicFile, StaleTempFilesAreRemoved) {
  testing::TempDir dir;
  write_file_atomic(dir.file(".x.pte.tmp-abc123"), std::string_view("partial"));
  write_file_atomic(dir.file("keep.pte"), std::string_view("whole"));
  remove_stale_temp_files(dir.path());
  EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"keep.pte"});
}

TEST(MappedFile, MissingFileIsAnInputErrorNamingThePath) {
  try {
    MappedFile::open("/nonexistent/dir/model.gguf");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace genai
