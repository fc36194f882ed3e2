#include "ir/input_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sator {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_input_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw InputFileError(std::string("cannot open the file (") + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputFileError(std::string("cannot read the file (") + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw InputFileError("is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw InputFileError("is not a regular file (a FIFO, a device or a socket); give a file");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw InputFileError("is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
                         " sator reads");
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(f.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputFileError(std::string("cannot read the file (") + std::strerror(errno) + ")");
    if (n == 0) break;  // it shrank while read
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace sator
