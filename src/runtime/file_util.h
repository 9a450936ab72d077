// src/runtime/file_util.h — small POSIX file helpers shared by the disk cache, the host compiler
// driver and the module loader: an owning file descriptor, whole-file reads and writes that
// survive EINTR and short transfers, and uniquely named temporary files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sg::runtime {

/// Owns a file descriptor; closes it on destruction.
class ScopedFd {
public:
    ScopedFd() = default;
    explicit ScopedFd(int fd) : fd_(fd) {}
    ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
    ScopedFd& operator=(ScopedFd&& other) noexcept;
    ScopedFd(const ScopedFd&) = delete;
    ScopedFd& operator=(const ScopedFd&) = delete;
    ~ScopedFd() { reset(); }

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    /// Closes now; returns false when close() reported an error (a write that did not land).
    bool reset();

private:
    int fd_ = -1;
};

/// Writes all of `bytes`, retrying on EINTR and short writes. False (errno set) on failure.
bool write_all(int fd, std::string_view bytes);

/// Reads from the current position to end of file. nullopt (errno set) on failure.
std::optional<std::string> read_all(int fd);

/// The whole content of the file at `path`; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::string& path);

/// A new, empty file `<dir>/<stem>-XXXXXX<suffix>` (mode 0600, close-on-exec) whose name no
/// other process or thread can be given. Returns the open descriptor and writes the name into
/// `path`; an invalid descriptor (errno set) on failure.
ScopedFd create_unique_file(const std::string& dir, std::string_view stem, std::string_view suffix,
                            std::string& path);

/// Creates `dir` and its parents; false (with a reason in `error`) when it does not exist after.
bool ensure_directory(const std::string& dir, std::string& error);

/// unlink() that ignores errors: used for temporaries whose removal is best effort.
void remove_quietly(const std::string& path) noexcept;

/// strerror(errno) as a std::string, for messages.
std::string errno_message(int error_number);

}  // namespace sg::runtime
