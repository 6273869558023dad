#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace genai {
namespace {
constexpr std::string_view kTempMarker = ".tmp-";
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path target, bool sync) : target_(std::move(target)), sync_(sync) {
  auto dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string pattern =
      (dir / ("." + target_.filename().string() + std::string(kTempMarker) + "XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) throw_failure("{}: cannot create temp file: {}", target_.string(), std::strerror(errno));
  temp_ = buf.data();
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFileWriter::write(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_failure("{}: write failed: {}", target_.string(), std::strerror(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  written_ += bytes.size();
}

void AtomicFileWriter::write(std::string_view text) {
  write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void AtomicFileWriter::write_zeros(size_t count) {
  static const uint8_t kZeros[4096] = {};
  while (count > 0) {
    size_t n = count < sizeof(kZeros) ? count : sizeof(kZeros);
    write(std::span<const uint8_t>(kZeros, n));
    count -= n;
  }
}

void AtomicFileWriter::commit() {
  if (::fchmod(fd_, 0644) != 0 || (sync_ && ::fsync(fd_) != 0))
    throw_failure("{}: flush failed: {}", target_.string(), std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) throw_failure("{}: cannot rename temp file into place: {}", target_.string(), ec.message());
  committed_ = true;
}

void write_file_atomic(const std::filesystem::path& target, std::span<const uint8_t> bytes) {
  AtomicFileWriter w(target);
  w.write(bytes);
  w.commit();
}

void write_file_atomic(const std::filesystem::path& target, std::string_view text) {
  AtomicFileWriter w(target);
  w.write(text);
  w.commit();
}

void remove_stale_temp_files(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.' && name.find(kTempMarker) != std::string::npos)
      std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace genai
