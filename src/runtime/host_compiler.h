// src/runtime/host_compiler.h — driving the system C++ compiler: choosing it, identifying it
// (for cache keys), and running it without a shell.
//
// In: compile options and file paths. Out: the compiler's exit status and its combined
// stdout/stderr. Knows nothing about caching; cpu_module.cpp decides what to compile and keeps.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sg::runtime {

struct ProcessResult {
    int exit_code = -1;       ///< the exit status, or -1 when killed by a signal
    int signal = 0;           ///< the terminating signal, 0 when it exited
    std::string output;       ///< stdout and stderr interleaved, at most max_output bytes
    size_t dropped_bytes = 0; ///< output beyond max_output that was read and discarded

    bool succeeded() const { return exit_code == 0; }
};

/// Runs argv[0] (looked up in PATH) with `argv`: no shell, so nothing in the arguments is ever
/// interpreted; stdin is /dev/null; stdout and stderr go to one pipe that is drained while the
/// child runs. Throws BackendError when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, size_t max_output = 1 << 20);

/// The compiler command: `configured` if not empty, else $SHADEGRAD_CXX, else $CXX, else "c++".
/// Split on whitespace so launcher forms like "ccache c++" work (no quoting is understood).
std::vector<std::string> host_compiler_command(const std::string& configured);

/// What identifies the compiler's output for a given input: the output of `--version` and of
/// `-dumpmachine` (the target: a cache shared by x86-64 and AArch64 hosts must not mix their
/// objects even when the version banners match). Run once per command per process. Throws
/// BackendError when the compiler cannot be run.
std::string host_compiler_identity(const std::vector<std::string>& compiler);

/// A cheap stand-in for host_compiler_identity() in cache keys that must be computed before
/// anything is compiled: per word of the command, the file it names (looked up in PATH like
/// posix_spawnp, symbolic links resolved) with its size, modification time and inode. No
/// process is started; a word that names no file is kept as written. Memoized per command.
std::string host_compiler_fingerprint(const std::vector<std::string>& compiler);

/// The flags of a shared-object compile, in order: the fixed ones (-std=c++17 -fPIC -shared
/// -fno-math-errno), -O2 or (debug) -O0 -g, then `extra` (last, so they can override). No
/// -march: cached objects must run on every machine of the target triple that shares the cache.
std::vector<std::string> host_compile_flags(const std::vector<std::string>& extra, bool debug);

/// compiler + flags + `-o output source`.
std::vector<std::string> host_compile_arguments(const std::vector<std::string>& compiler,
                                                const std::vector<std::string>& flags,
                                                const std::string& source_path,
                                                const std::string& output_path);

/// A command line for messages (arguments separated by spaces; not meant to be re-parsed).
std::string join_command(const std::vector<std::string>& argv);

}  // namespace sg::runtime
