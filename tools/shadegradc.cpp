// tools/shadegradc.cpp — command-line compiler: checks a kernel file and prints its AST, IR or
// generated CPU/CUDA code.
//
//   shadegradc FILE [--entry FN] [--emit ast|ir|cpp|cuda] [--no-derivatives] [-o OUT]
//   shadegradc --print-passes
//
// The compilation is the compiler driver's (src/driver/driver.h), the one the call layer runs
// for its kernels, with the same IR pass pipeline (--print-passes lists it). Every function is
// compiled with its declared parameter types, except that an interface tensor parameter
// (ITensor, IDiffTensor, ...) takes its concrete kind with every buffer bound (for IDiffTensor: a
// DiffTensor with a gradient), the kind of a call where all inputs require grad
// (driver::concrete_params). A [Differentiable] function also gets its backward and forward
// derivatives (bwd_<f>, fwd_<f>), as a call through bwd_diff/fwd_diff would generate them (none
// of a kind the user supplies).
//
// Exit status 0 on success (and for --help, --print-passes), 1 on compile errors (diagnostics on
// stderr), 2 on usage errors.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "syntax/ast_printer.h"

namespace {

/// Prints the usage: to stdout with status 0 when asked for (--help), else to stderr with status 2
/// after the line saying what was wrong.
int usage(bool asked = false, const std::string& problem = "") {
    if (!problem.empty()) std::fprintf(stderr, "shadegradc: %s\n", problem.c_str());
    std::fprintf(asked ? stdout : stderr,
                 "usage: shadegradc FILE [--entry FN] [--emit ast|ir|cpp|cuda] [--no-derivatives] [-o OUT]\n"
                 "       shadegradc --print-passes\n"
                 "  --entry FN        compile only function FN (and what it calls); default: every function\n"
                 "  --emit WHAT       ast, ir (after autodiff and inlining; the default), cpp (CPU backend)\n"
                 "                    or cuda\n"
                 "  --no-derivatives  do not generate bwd_/fwd_ derivatives of [Differentiable] functions\n"
                 "  -o OUT            write the output to OUT instead of standard output\n"
                 "  --print-passes    print the IR passes run after autodiff, in order, and exit\n"
                 "  -h, --help        print this help\n");
    return asked ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string file, entry, emit = "ir", out_path;
    bool derivatives = true, print_passes = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const bool takes_value = a == "--entry" || a == "--emit" || a == "-o";
        if (takes_value && i + 1 >= argc) return usage(false, "option " + a + " needs a value");
        if (a == "--entry") entry = argv[++i];
        else if (a == "--emit") emit = argv[++i];
        else if (a == "-o") out_path = argv[++i];
        else if (a == "--no-derivatives") derivatives = false;
        else if (a == "--print-passes") print_passes = true;
        else if (a == "-h" || a == "--help") return usage(true);
        else if (!a.empty() && a[0] == '-') return usage(false, "unknown option '" + a + "'");
        else if (file.empty()) file = a;
        else return usage(false, "one input file only, got '" + file + "' and '" + a + "'");
    }
    if (print_passes) {
        for (const std::string& name : sg::driver::pipeline().names()) std::printf("%s\n", name.c_str());
        return 0;
    }
    if (file.empty()) return usage(false, "no input file");
    if (emit != "ast" && emit != "ir" && emit != "cpp" && emit != "cuda")
        return usage(false, "--emit takes ast, ir, cpp or cuda, got '" + emit + "'");
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "shadegradc: cannot read '%s'\n", file.c_str());
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();

    using namespace sg;
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    std::string output;
    try {
        // Includes and imports resolve beside FILE; the AST printed is the file's own.
        driver::Input input;
        input.roots.push_back({file, ss.str(), file, /*loader=*/nullptr, /*constants=*/nullptr});
        driver::Options options;
        options.scope = driver::Scope::Functions;
        options.entry = entry;
        options.concrete_tensors = true;
        options.derivatives = derivatives ? driver::Derivatives::EachLowered : driver::Derivatives::None;
        options.stop_after = emit == "ast" ? driver::Phase::Load : driver::Phase::Everything;
        options.emit_ir = emit == "ir";
        options.emit_code = emit == "cpp" || emit == "cuda";
        options.target = emit == "cuda" ? DeviceType::CUDA : DeviceType::CPU;
        driver::Result compiled;
        driver::compile({sources, ast, types, diags}, input, options, compiled);
        if (emit == "ast") {
            output = lang::print_ast(*compiled.modules.back());
        } else if (!entry.empty() && compiled.entries.empty()) {
            std::fprintf(stderr, "shadegradc: no function '%s' in %s\n", entry.c_str(), file.c_str());
            return 1;
        } else {
            output = emit == "ir" ? std::move(compiled.ir_text) : std::move(compiled.code);
        }
        std::string warnings = diags.render();
        if (!warnings.empty()) std::fputs(warnings.c_str(), stderr);
    } catch (const lang::CompileError& e) {
        std::fputs(e.what(), stderr);
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "shadegradc: %s\n", e.what());
        return 1;
    }
    if (out_path.empty()) {
        std::fputs(output.c_str(), stdout);
    } else {
        std::ofstream out(out_path, std::ios::binary);
        out << output;
        if (!out) {
            std::fprintf(stderr, "shadegradc: cannot write '%s'\n", out_path.c_str());
            return 1;
        }
    }
    return 0;
}
