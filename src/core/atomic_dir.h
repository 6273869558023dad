// Replacing a directory's content as one step. A writer fills staging(), then commit() swaps the
// staged directory with the target in one rename (Linux renameat2 RENAME_EXCHANGE), so the target
// path names either the previous complete set of files or the new one, whatever moment the
// process is killed at; leftovers of a killed writer are hidden siblings that the next writer
// removes. Files of the previous set that the new one does not write are carried over.
//
// When there is no previous set (no `commit_point` file in the target), or the swap is not
// possible (a subdirectory inside, the target is the working directory, a parent that cannot be
// written, a file system without RENAME_EXCHANGE), files are written in place instead: the commit
// point is removed first and must be written last, so the target never carries a commit point
// naming files of an interrupted run.
#pragma once

#include <filesystem>
#include <string>

namespace genai {

class DirectoryReplacement {
 public:
  // Creates `dir` when missing; removes stale leftovers of earlier interrupted writers.
  DirectoryReplacement(std::filesystem::path dir, std::string commit_point);
  ~DirectoryReplacement();  // removes the staging directory unless commit() succeeded
  DirectoryReplacement(const DirectoryReplacement&) = delete;
  DirectoryReplacement& operator=(const DirectoryReplacement&) = delete;

  // Where the new files go (the target itself when writing in place).
  const std::filesystem::path& staging() const { return staging_; }
  bool in_place() const { return staging_ == dir_; }
  // Makes the staged set the target's content.
  void commit();

 private:
  void move_in_place();
  std::filesystem::path dir_;
  std::filesystem::path staging_;
  std::string commit_point_;
  bool committed_ = false;
};

}  // namespace genai
