// src/runtime/host_compiler.cpp — choosing, identifying and running the system C++ compiler
// (see host_compiler.h).
#include "runtime/host_compiler.h"

#include "runtime/cpu_module.h"
#include "runtime/file_util.h"
#include "runtime/module_cache.h"  // LoadStats

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <pthread.h>
#include <climits>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sg::runtime {
namespace {

// Closes a posix_spawn attribute object on every exit path.
struct SpawnFileActions {
    posix_spawn_file_actions_t actions;
    SpawnFileActions() { ::posix_spawn_file_actions_init(&actions); }
    ~SpawnFileActions() { ::posix_spawn_file_actions_destroy(&actions); }
};

[[noreturn, gnu::noinline]] void throw_spawn_error(const std::vector<std::string>& argv,
                                                   int error) {
    throw BackendError("cannot run '" + join_command(argv) + "': " + errno_message(error) +
                       " (set SHADEGRAD_CXX or CXX to a C++ compiler)");
}

std::string trim(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    return text;
}

std::mutex g_identity_mutex;
std::map<std::string, std::string> g_identities;  // joined command -> identity

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, size_t max_output) {
    if (argv.empty()) throw BackendError("run_process: empty command");
    std::vector<char*> c_argv;
    c_argv.reserve(argv.size() + 1);
    for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
    c_argv.push_back(nullptr);

    // Both ends close-on-exec: a compiler spawned concurrently by another thread must not
    // inherit our write end, or our read would not see EOF until that other compiler exits.
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw_spawn_error(argv, errno);
    ScopedFd read_end(pipe_fds[0]);
    ScopedFd write_end(pipe_fds[1]);

    SpawnFileActions files;
    ::posix_spawn_file_actions_addopen(&files.actions, 0, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&files.actions, write_end.get(), 1);  // dup2 clears
    ::posix_spawn_file_actions_adddup2(&files.actions, write_end.get(), 2);  // close-on-exec

    // posix_spawnp (vfork-like in glibc) rather than fork+exec: it does not copy the address
    // space of a large process (a PyTorch one), is safe in a multithreaded process, and
    // reports a failed exec (compiler not found) as its return value.
    pid_t pid = -1;
    const int spawn_error =
        ::posix_spawnp(&pid, c_argv[0], &files.actions, nullptr, c_argv.data(), environ);
    write_end.reset();  // only the child holds the write end now: EOF when it exits
    if (spawn_error != 0) throw_spawn_error(argv, spawn_error);

    ProcessResult result;
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        // Keep draining past the limit: a child blocked on a full pipe would never exit.
        const size_t keep = std::min(static_cast<size_t>(n), max_output - result.output.size());
        result.output.append(buffer, keep);
        result.dropped_bytes += static_cast<size_t>(n) - keep;
    }

    int status = 0;
    pid_t waited;
    do {
        waited = ::waitpid(pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    if (waited < 0) {
        // ECHILD: the host process set SIGCHLD to SIG_IGN, so the child was reaped without a
        // status. Report failure; the caller's message shows the output it did capture.
        result.exit_code = -1;
    } else if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

std::vector<std::string> host_compiler_command(const std::string& configured) {
    std::string command = configured;
    if (command.empty()) {
        for (const char* variable : {"SHADEGRAD_CXX", "CXX"}) {
            if (const char* value = std::getenv(variable); value && *value) {
                command = value;
                break;
            }
        }
    }
    std::vector<std::string> words;
    size_t i = 0;
    while (i < command.size()) {
        const size_t start = command.find_first_not_of(" \t", i);
        if (start == std::string::npos) break;
        size_t end = command.find_first_of(" \t", start);
        if (end == std::string::npos) end = command.size();
        words.push_back(command.substr(start, end - start));
        i = end;
    }
    if (words.empty()) words.push_back("c++");
    return words;
}

std::string host_compiler_identity(const std::vector<std::string>& compiler) {
    static std::once_flag fork_handlers_once;
    std::call_once(fork_handlers_once, [] {
        // Held across fork() so a child never inherits it locked (see disk_cache.cpp).
        ::pthread_atfork([] { g_identity_mutex.lock(); }, [] { g_identity_mutex.unlock(); },
                         [] { g_identity_mutex.unlock(); });
    });

    const std::string key = join_command(compiler);
    std::lock_guard<std::mutex> lock(g_identity_mutex);
    if (auto it = g_identities.find(key); it != g_identities.end()) return it->second;

    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> argv = compiler;
    argv.push_back("--version");
    ProcessResult version = run_process(argv, 16384);
    if (!version.succeeded())
        throw BackendError("'" + join_command(argv) + "' failed (exit status " +
                           std::to_string(version.exit_code) + "): " + trim(version.output) +
                           " (set SHADEGRAD_CXX or CXX to a C++ compiler)");
    argv.back() = "-dumpmachine";
    ProcessResult machine = run_process(argv, 4096);
    // A compiler without -dumpmachine still gets a usable (if less specific) identity.
    std::string identity = trim(version.output) + "\ntarget: " +
                           (machine.succeeded() ? trim(machine.output) : std::string("unknown"));
    add_load_stats(LoadStats{.identity_ms = ms_since(start)});
    return g_identities.emplace(key, std::move(identity)).first->second;
}

/// "path size mtime inode" of the file `name` runs (PATH lookup for a bare name), or `name`.
static std::string executable_fingerprint(const std::string& name) {
    std::vector<std::string> candidates;
    if (name.find('/') != std::string::npos) {
        candidates.push_back(name);
    } else if (const char* path = std::getenv("PATH")) {
        std::string dirs = path;
        for (size_t begin = 0; begin <= dirs.size();) {
            size_t end = dirs.find(':', begin);
            if (end == std::string::npos) end = dirs.size();
            const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
            candidates.push_back(dir + "/" + name);
            begin = end + 1;
        }
    }
    for (const std::string& candidate : candidates) {
        struct stat st {};
        if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(candidate.c_str(), X_OK) != 0)
            continue;
        char resolved[PATH_MAX];
        const std::string real = ::realpath(candidate.c_str(), resolved) ? resolved : candidate;
        return real + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino);
    }
    return name;
}

std::string host_compiler_fingerprint(const std::vector<std::string>& compiler) {
    static std::mutex mutex;
    static std::map<std::string, std::string> memo;
    const std::string key = join_command(compiler);
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    std::string out;
    for (const std::string& word : compiler) out += executable_fingerprint(word) + "\n";
    return memo.emplace(key, std::move(out)).first->second;
}

std::vector<std::string> host_compile_flags(const std::vector<std::string>& extra, bool debug) {
    // -fwrapv: signed overflow wraps, as in HLSL (the prelude only guards division and shifts).
    std::vector<std::string> flags = {"-std=c++17", "-fPIC", "-shared", "-fno-math-errno", "-fwrapv"};
    if (debug) {
        flags.push_back("-O0");
        flags.push_back("-g");
    } else {
        flags.push_back("-O2");
    }
    flags.insert(flags.end(), extra.begin(), extra.end());
    return flags;
}

std::vector<std::string> host_compile_arguments(const std::vector<std::string>& compiler,
                                                const std::vector<std::string>& flags,
                                                const std::string& source_path,
                                                const std::string& output_path) {
    std::vector<std::string> argv = compiler;
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("-o");
    argv.push_back(output_path);
    argv.push_back(source_path);
    return argv;
}

std::string join_command(const std::vector<std::string>& argv) {
    std::string line;
    for (const std::string& arg : argv) {
        if (!line.empty()) line += ' ';
        line += arg;
    }
    return line;
}

}  // namespace sg::runtime
