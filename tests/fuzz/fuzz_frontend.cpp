// tests/fuzz/fuzz_frontend.cpp — libFuzzer target over the whole front end: lexer, parser, sema,
// lowering of every function (tensor functions with gradient-bound tensors), forward and backward
// autodiff of every [Differentiable] function, the IR passes with the verifier, the IR printer
// and CPU code generation (tests/support/frontend_pipeline.h).
//
// Contract under test (docs/design.md, "Errors are located or internal"): no input may crash the compiler, leak, or corrupt
// memory. A CompileError (diagnostics) is the expected answer to bad input. An InternalError, or
// any other exception escaping the front end, is a compiler bug ("finding"):
//   * by default it is counted and reported once per distinct message, with the input, on
//     stderr; the smallest input seen for each message is kept in $SG_FUZZ_FINDINGS_DIR (when
//     set) as <key>.slang beside <key>.txt (the message), and a summary is printed at exit;
//   * with SG_FUZZ_STRICT=1 it aborts, so libFuzzer saves and can minimize the input
//     (`-minimize_crash=1`).
// Crashes, sanitizer reports, leaks and timeouts are libFuzzer's own findings.
//
// Build and run: scripts/fuzz.sh (docs/fuzzing.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "frontend_pipeline.h"

namespace {

struct Finding {
    std::string message;   ///< the first full message seen
    std::string smallest;  ///< the smallest input that produced it
    size_t count = 0;
};

/// Bounded so that a bug whose message embeds input-dependent text cannot grow memory without
/// limit over a long run (libFuzzer's rss limit would then report the harness, not the bug).
constexpr size_t kMaxDistinctFindings = 500;

struct State {
    bool strict = false;
    std::string findings_dir;
    std::map<std::string, Finding> findings;  ///< by normalized message
    size_t total = 0;
};

State& state() {
    static State* s = new State;  // never destroyed: read by the atexit summary
    return *s;
}

/// Groups messages that differ only in names of one particular input, not in the bug: IR values
/// (`%12`, `%12.hint` → `%N`), functions (`@name` → `@F`) and numbered temporaries (`_3`, `#3`).
std::string normalized(const std::string& message) {
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    auto is_ident = [&](char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    std::string out;
    out.reserve(message.size());
    size_t i = 0;
    auto skip_while = [&](auto pred) {
        while (i < message.size() && pred(message[i])) ++i;
    };
    while (i < message.size()) {
        char c = message[i];
        char prev = out.empty() ? '\0' : out.back();
        if (prev == '%' && is_digit(c)) {
            out += 'N';
            skip_while(is_digit);
            if (i + 1 < message.size() && message[i] == '.' && is_ident(message[i + 1])) {
                ++i;
                skip_while(is_ident);
            }
        } else if (prev == '@' && is_ident(c)) {
            out += 'F';
            skip_while(is_ident);
        } else if ((prev == '_' || prev == '#') && is_digit(c)) {
            out += 'N';
            skip_while(is_digit);
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

/// A short stable file name for a finding key (FNV-1a).
std::string key_file_name(const std::string& key) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    char buf[32];
    std::snprintf(buf, sizeof buf, "finding-%016llx", static_cast<unsigned long long>(h));
    return buf;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

void print_summary() {
    const State& s = state();
    if (s.total == 0) return;
    std::fprintf(stderr, "\nshadegrad-fuzz: %zu internal-error finding(s), %zu distinct:\n", s.total, s.findings.size());
    for (const auto& [key, f] : s.findings)
        std::fprintf(stderr, "  %6zu x  (smallest input %zu bytes)  %s\n", f.count, f.smallest.size(), f.message.c_str());
}

void report(const std::string& kind, const std::string& what, const std::string& input) {
    State& s = state();
    if (s.strict) {
        std::fprintf(stderr, "shadegrad-fuzz: %s: %s\n", kind.c_str(), what.c_str());
        std::abort();
    }
    ++s.total;
    std::string message = kind + ": " + what;
    std::string key = normalized(message);
    auto it = s.findings.find(key);
    bool is_new = it == s.findings.end();
    if (is_new) {
        if (s.findings.size() >= kMaxDistinctFindings) return;
        it = s.findings.emplace(key, Finding{message, input, 0}).first;
        std::fprintf(stderr,
                     "\nshadegrad-fuzz: NEW FINDING #%zu: %s\n--- input (%zu bytes) ---\n%s\n--- end of input ---\n",
                     s.findings.size(), message.c_str(), input.size(), input.c_str());
    }
    Finding& f = it->second;
    ++f.count;
    bool smaller = input.size() < f.smallest.size();
    if (smaller) f.smallest = input;
    if (!s.findings_dir.empty() && (is_new || smaller)) {
        std::string base = s.findings_dir + "/" + key_file_name(key);
        write_file(base + ".slang", f.smallest);
        if (is_new) write_file(base + ".txt", message + "\n");
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    State& s = state();
    const char* strict = std::getenv("SG_FUZZ_STRICT");
    s.strict = strict && *strict && std::string(strict) != "0";
    if (const char* dir = std::getenv("SG_FUZZ_FINDINGS_DIR")) s.findings_dir = dir;
    std::atexit(print_summary);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string input(reinterpret_cast<const char*>(data), size);
    // Beyond what the module itself asks for, everything a kernel call could ask for: tensor
    // functions with gradient-bound tensors, both derivatives of every [Differentiable] function.
    sg::test::FrontendOptions options;
    options.concrete_tensors = true;
    options.differentiate_all = true;
    options.verify = true;
    options.print_ir = true;
    options.codegen = true;
    try {
        sg::test::run_frontend("fuzz.slang", input, options);
    } catch (const sg::lang::InternalError& e) {
        report("InternalError", e.what(), input);
    } catch (const std::exception& e) {
        report("unexpected exception", e.what(), input);
    }
    return 0;
}
