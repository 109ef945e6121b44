// File reading and atomic writing.
#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace perseus {

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat on the
  // descriptor judges the file actually opened.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::IoError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::IoError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      return Status::IoError(path + ": " + err);
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {  // it grew while read
      ::close(fd);
      return Status::IoError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  return WriteFileAtomic(path, [&contents](std::ostream& out) { out.write(contents.data(), static_cast<std::streamsize>(contents.size())); });
}

Status WriteFileAtomic(const std::string& path, const StreamWriter& write, const std::string& shown_as) {
  const std::string& name = shown_as.empty() ? path : shown_as;
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(name + ": cannot create it: " + std::strerror(errno));
  errno = 0;
  write(out);
  out.flush();
  bool ok = out.good();
  // The first failed write(2) leaves the stream bad and its errno (a full
  // disk: ENOSPC) in place; a stream error of the writer's own has none.
  int err = ok ? 0 : errno;
  out.close();
  if (ok && out.fail()) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::IoError(name + ": write failed" + (err != 0 ? std::string(": ") + std::strerror(err) : ""));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::IoError(name + ": " + err);
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(dir + ": " + ec.message());
  return Status::Ok();
}

Status CheckCanCreate(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return Status::IoError(path + ": folder " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return Status::IoError(path + ": " + dir + " is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError(path + ": folder " + dir + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace perseus
