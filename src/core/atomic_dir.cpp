#include "core/atomic_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"

namespace genai {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kStagingMarker = ".genai-staging-";

// Hidden siblings of `dir` an interrupted writer may leave: ".<name>.genai-staging-XXXXXX".
std::string staging_prefix(const fs::path& dir) { return "." + dir.filename().string() + std::string(kStagingMarker); }

void fsync_path(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void remove_stale_staging(const fs::path& dir) {
  std::error_code ec;
  const std::string prefix = staging_prefix(dir);
  for (const auto& entry : fs::directory_iterator(dir.parent_path(), ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(entry.path(), ec);
  }
}

// A swap replaces the directory inode: anything that cannot simply be carried over as a file
// (a subdirectory someone put there), or a directory this process stands in, is written in place.
bool swappable(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) return false;
  }
  if (ec) return false;
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  for (fs::path p = cwd; !p.empty(); p = p.parent_path()) {
    if (p == dir) return false;
    if (p == p.parent_path()) break;
  }
  return true;
}

bool is_temp_name(const std::string& name) { return !name.empty() && name[0] == '.' && name.find(".tmp-") != std::string::npos; }

}  // namespace

DirectoryReplacement::DirectoryReplacement(fs::path dir, std::string commit_point)
    : commit_point_(std::move(commit_point)) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw_failure("{}: cannot create the folder: {}", dir.string(), ec.message());
  // The real directory (not a symlink to it, not "."): the swap renames it.
  dir_ = fs::canonical(dir, ec);
  if (ec) throw_failure("{}: cannot resolve the folder: {}", dir.string(), ec.message());
  remove_stale_temp_files(dir_);
  remove_stale_staging(dir_);
  staging_ = dir_;
  if (fs::exists(dir_ / commit_point_, ec) && swappable(dir_)) {
    std::string pattern = (dir_.parent_path() / (staging_prefix(dir_) + "XXXXXX")).string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) {
      staging_ = buf.data();
      // mkdtemp makes it 0700; the swapped-in directory keeps the previous one's permissions.
      struct stat st {};
      if (::stat(dir_.c_str(), &st) == 0) ::chmod(staging_.c_str(), st.st_mode & 07777);
    }
  }
  if (in_place()) fs::remove(dir_ / commit_point_, ec);
}

DirectoryReplacement::~DirectoryReplacement() {
  if (!committed_ && !in_place()) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void DirectoryReplacement::commit() {
  if (in_place()) {
    committed_ = true;
    return;
  }
  std::error_code ec;
  // Carry over what the previous set holds and the new one does not write (hard links: no copy).
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const fs::path name = entry.path().filename();
    if (is_temp_name(name.string()) || fs::exists(staging_ / name)) continue;
    std::error_code link_ec;
    fs::create_hard_link(entry.path(), staging_ / name, link_ec);
    if (link_ec) fs::copy_file(entry.path(), staging_ / name, link_ec);
    if (link_ec) throw_failure("{}: cannot carry {} over: {}", dir_.string(), name.string(), link_ec.message());
  }
  fsync_path(staging_);
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS && errno != EXDEV && errno != ENOTSUP)
      throw_failure("{}: cannot swap the new files in: {}", dir_.string(), std::strerror(errno));
    move_in_place();
  } else {
    committed_ = true;
    fsync_path(dir_.parent_path());
    fs::remove_all(staging_, ec);  // now the previous set; a kill here leaves a stale sibling
  }
}

// Without an atomic swap: the commit point goes first and comes back last.
void DirectoryReplacement::move_in_place() {
  std::error_code ec;
  fs::remove(dir_ / commit_point_, ec);
  fsync_path(dir_);
  for (const auto& entry : fs::directory_iterator(staging_, ec)) {
    const fs::path name = entry.path().filename();
    if (name == commit_point_) continue;
    fs::rename(entry.path(), dir_ / name, ec);
    if (ec) throw_failure("{}: cannot move {} into place: {}", dir_.string(), name.string(), ec.message());
  }
  fsync_path(dir_);
  fs::rename(staging_ / commit_point_, dir_ / commit_point_, ec);
  if (ec) throw_failure("{}: cannot move {} into place: {}", dir_.string(), commit_point_, ec.message());
  committed_ = true;
  fs::remove_all(staging_, ec);
}

}  // namespace genai
