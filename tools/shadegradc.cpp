// tools/shadegradc.cpp — command-line compiler: checks a kernel file and prints its AST, IR or
// generated CPU/CUDA code.
//
//   shadegradc FILE [--entry FN] [--emit ast|ir|cpp|cuda] [--no-derivatives] [-o OUT]
//
// Every function is compiled with its declared parameter types, except that an interface tensor
// parameter (ITensor, IDiffTensor, ...) takes its concrete kind with every buffer bound (for
// IDiffTensor: a DiffTensor with a gradient), the kind of a call where all inputs require grad.
// A [Differentiable] function also gets its backward and forward derivatives (bwd_<f>, fwd_<f>),
// as a call through bwd_diff/fwd_diff would generate them (none of a kind the user supplies).
//
// Exit status 0 on success (and for --help), 1 on compile errors (diagnostics on stderr), 2 on
// usage errors.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "codegen/codegen.h"
#include "ir/lower.h"
#include "ir/passes.h"
#include "lang/ast_printer.h"
#include "lang/module_loader.h"
#include "lang/parser.h"
#include "lang/sema.h"

namespace {

/// Prints the usage: to stdout with status 0 when asked for (--help), else to stderr with status 2.
int usage(bool asked = false) {
    std::fprintf(asked ? stdout : stderr,
                 "usage: shadegradc FILE [--entry FN] [--emit ast|ir|cpp|cuda] [--no-derivatives] [-o OUT]\n"
                 "  --entry FN        compile only function FN (and what it calls); default: every function\n"
                 "  --emit WHAT       ast, ir (after autodiff and inlining; the default), cpp (CPU backend)\n"
                 "                    or cuda\n"
                 "  --no-derivatives  do not generate bwd_/fwd_ derivatives of [Differentiable] functions\n"
                 "  -o OUT            write the output to OUT instead of standard output\n"
                 "  -h, --help        print this help\n");
    return asked ? 0 : 2;
}

// The parameter types a function is compiled with: interface tensors become the concrete kind
// with every buffer bound (see the file comment).
std::vector<const sg::lang::Type*> concrete_params(const sg::lang::FunctionDecl& f, sg::lang::TypeContext& types) {
    std::vector<const sg::lang::Type*> out;
    for (const sg::lang::VarDecl* p : f.params) {
        const sg::lang::Type* t = p->type;
        if (t->is_tensor() && t->tensor.interface) {
            sg::lang::TensorKind kind = t->tensor;
            kind.interface = false;
            kind.has_grad = kind.differentiable;
            t = types.tensor(t->element, t->rank, kind);
        }
        out.push_back(t);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string file, entry, emit = "ir", out_path;
    bool derivatives = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--entry" && i + 1 < argc) entry = argv[++i];
        else if (a == "--emit" && i + 1 < argc) emit = argv[++i];
        else if (a == "-o" && i + 1 < argc) out_path = argv[++i];
        else if (a == "--no-derivatives") derivatives = false;
        else if (a == "-h" || a == "--help") return usage(true);
        else if (!a.empty() && a[0] == '-') return usage();
        else if (file.empty()) file = a;
        else return usage();
    }
    if (file.empty() || (emit != "ast" && emit != "ir" && emit != "cpp" && emit != "cuda")) return usage();
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
        lang::SourceFile* root = sources.add(file, ss.str());
        root->path = file;
        lang::SourceLoader loader;
        std::vector<lang::ModuleAst*> modules = lang::load_modules(root, sources, loader, ast, diags);
        diags.throw_if_errors();
        if (emit == "ast") {
            output = lang::print_ast(*modules.back());
        } else {
            lang::SemaResult sema = lang::analyze(modules, ast, types, diags);
            diags.throw_if_errors();
            ir::Program program;
            program.types = &types;
            ir::Lowering lowering(program, diags);
            bool found = false;
            for (lang::FunctionDecl* f : sema.functions) {
                if (!entry.empty() && f->name != entry) continue;
                ir::Function* fn = lowering.instantiate(f, concrete_params(*f, types));
                if (derivatives && f->is_differentiable) {  // a user-supplied derivative stands for its kind
                    if (!fn->custom_backward) lowering.derivative(fn, ir::DerivativeKind::Backward);
                    if (!fn->custom_forward) lowering.derivative(fn, ir::DerivativeKind::Forward);
                }
                found = true;
            }
            diags.throw_if_errors();
            if (!entry.empty() && !found) {
                std::fprintf(stderr, "shadegradc: no function '%s' in %s\n", entry.c_str(), file.c_str());
                return 1;
            }
            autodiff::generate_derivatives(program, lowering.derivative_requests());
            for (auto& fn : program.functions) {
                ir::inline_calls(*fn);
                autodiff::strip_detach(*fn);
                ir::dead_code(*fn);
                ir::cse(*fn);
                ir::pair_sincos(*fn);
            }
            if (emit == "ir") output = ir::print_program(program);
            else output = codegen::generate_functions(program, emit == "cuda" ? DeviceType::CUDA : DeviceType::CPU);
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
