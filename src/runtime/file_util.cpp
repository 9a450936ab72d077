// src/runtime/file_util.cpp — POSIX file helpers (see file_util.h).
#include "runtime/file_util.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace sg::runtime {

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = other.release();
    }
    return *this;
}

bool ScopedFd::reset() {
    if (fd_ < 0) return true;
    // No retry on EINTR: on Linux the descriptor is released even when close() is interrupted,
    // and closing it again could close a descriptor another thread has just been given.
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 || errno == EINTR;
}

bool write_all(int fd, std::string_view bytes) {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    return true;
}

std::optional<std::string> read_all(int fd) {
    std::string out;
    struct stat st {};
    // Size the buffer from fstat when it is a regular file; still read to EOF, since the size
    // is only a hint (and 0 for pipes).
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        out.reserve(static_cast<size_t>(st.st_size));
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::nullopt;
        }
        if (n == 0) return out;
        out.append(buffer, static_cast<size_t>(n));
    }
}

std::optional<std::string> read_file(const std::string& path) {
    ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    return read_all(fd.get());
}

ScopedFd create_unique_file(const std::string& dir, std::string_view stem, std::string_view suffix,
                            std::string& path) {
    std::string name = dir;
    name += '/';
    name += stem;
    name += "-XXXXXX";
    name += suffix;
    // mkostemps: O_EXCL creation with a random name, so concurrent processes sharing the cache
    // directory never write into each other's temporaries; O_CLOEXEC keeps the descriptor out
    // of the compiler processes other threads spawn.
    const int fd = ::mkostemps(name.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
    if (fd >= 0) path = std::move(name);
    return ScopedFd(fd);
}

bool ensure_directory(const std::string& dir, std::string& error) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);  // succeeds (false) when it already exists
    if (std::filesystem::is_directory(dir, ec)) return true;
    error = "cannot create directory '" + dir + "'" + (ec ? ": " + ec.message() : std::string());
    return false;
}

void remove_quietly(const std::string& path) noexcept {
    if (!path.empty()) ::unlink(path.c_str());
}

namespace {
// strerror_r has two signatures (GNU returns the message, XSI fills the buffer and returns 0);
// overloading on the result type accepts whichever the C library declares.
[[maybe_unused]] const char* strerror_result(const char* message, const char*) { return message; }
[[maybe_unused]] const char* strerror_result(int result, const char* buffer) {
    return result == 0 ? buffer : "unknown error";
}
}  // namespace

std::string errno_message(int error_number) {
    char buffer[256] = {};
    return strerror_result(::strerror_r(error_number, buffer, sizeof buffer), buffer);
}

}  // namespace sg::runtime
