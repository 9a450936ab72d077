// tests/cpp/test_programs_harness.h — support for the kernel-language program tests
// (test_programs*.cpp, test_diagnostics*.cpp): finding the tests/lang programs, parsing their
// `// expect:` / `// error:` headers, compiling a program's `test()` through a generated glue
// entry on the CPU backend, running it, and compiling the same entry for CUDA.
//
// A program declares `T test()` for a plain value type T (scalar, vector, matrix, array or
// struct of any scalar type). The harness writes an entry point in the kernel
// language that stores every scalar component of test()'s result, in order, into a
// RWTensor<double, 1> (double holds every scalar exactly but 64-bit integers, which take two
// slots), packs a parameter block from
// the kernel's layout and runs one thread. Headers (see tests/lang/README.md):
//   // expect: VALUE        3.5 | -2 | true | (1, 2, 3) | ((1, 2), (3, 4)) — nesting is for
//                           reading only; the flattened components are compared in order
//   // error: L:C: TEXT     a must-fail program: an error at line L, column C whose message
//                           contains TEXT (L may be written +N: line N of an appended .test file)
//   // error-code: N        one of the matched errors carries Slang's diagnostic number N
//   // warning: L:C: TEXT   a warning the program must produce (programs with a result compile
//                           without any other warning)
//   // remove: TEXT         (conformance .test files) delete every TEXT from the kernel source first
//   // error: FILE:L:C: TEXT   an error in another file (an included or imported one): the
//                           diagnostic's file name ends with FILE ("include/bad.h")
//   // rendered: TEXT       the rendered diagnostics contain TEXT ("in file included from x.slang:3")
//
// Multi-file programs: a program's includes and imports are found beside it and in the
// `include` folder next to it (tests/lang/<feature>/include, an include path); side files live
// in subfolders, which are not programs themselves.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "call/compile_kernel.h"
#include "call/user_module.h"
#include "runtime/cpu_module.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_launch.h"
#include "runtime/cuda_nvrtc.h"
#include "../support/cuda_compile_check.h"
#include "test_program_inputs.h"

namespace sg::test {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline fs::path lang_tests_dir() { return fs::path(SG_SOURCE_DIR) / "tests" / "lang"; }

/// Every file with extension `ext` in the feature folders of tests/lang, sorted, as
/// "feature/file" paths relative to tests/lang. `include` selects folders by name.
template <class Pred>
std::vector<std::string> list_lang_files(const std::string& ext, Pred include) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& dir : fs::directory_iterator(lang_tests_dir(), ec)) {
        if (!dir.is_directory() || !include(dir.path().filename().string())) continue;
        for (const auto& f : fs::directory_iterator(dir.path()))
            if (f.path().extension() == ext)
                out.push_back(dir.path().filename().string() + "/" + f.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// A gtest-safe test name from a "feature/file.slang" path.
inline std::string test_name(const std::string& rel) {
    std::string n;
    for (char c : fs::path(rel).replace_extension().string())
        n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return n;
}

/// The value after `// KEY:` on each header line that has it, in order.
inline std::vector<std::string> header_values(const std::string& source, const std::string& key) {
    std::vector<std::string> out;
    std::istringstream in(source);
    std::string line;
    const std::string tag = "// " + key + ":";
    while (std::getline(in, line)) {
        size_t at = line.find(tag);
        if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
        std::string v = line.substr(at + tag.size());
        v.erase(0, v.find_first_not_of(" \t"));
        while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\t')) v.pop_back();
        out.push_back(v);
    }
    return out;
}

/// Flattens an `// expect:` value: numbers, true/false, inf/nan, nested in ( , ).
inline std::vector<double> parse_expect(const std::string& text) {
    std::vector<double> out;
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c == '(' || c == ')' || c == ',' || c == ' ' || c == '\t') {
            ++i;
            continue;
        }
        size_t end = text.find_first_of("(), \t", i);
        std::string tok = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
        i = end == std::string::npos ? text.size() : end;
        if (tok == "true") out.push_back(1);
        else if (tok == "false") out.push_back(0);
        else if (tok == "inf") out.push_back(INFINITY);
        else if (tok == "-inf") out.push_back(-INFINITY);
        else if (tok == "nan") out.push_back(NAN);
        else {
            size_t used = 0;
            double v = std::stod(tok, &used);
            if (used != tok.size()) throw std::runtime_error("bad expected value '" + tok + "'");
            out.push_back(v);
        }
    }
    return out;
}

/// One scalar component of a test() result: how to reach it from `_v` and its scalar kind.
struct Leaf {
    std::string path;
    lang::ScalarKind kind;
};

inline void flatten(const lang::TypeContext& types, const lang::Type* t, const std::string& path,
                    std::vector<Leaf>& out) {
    switch (t->kind) {
    case lang::TypeKind::Scalar: out.push_back({path, t->scalar}); break;
    case lang::TypeKind::Vector:
        for (int k = 0; k < t->rows; ++k) out.push_back({path + "[" + std::to_string(k) + "]", t->scalar});
        break;
    case lang::TypeKind::Matrix:
        for (int r = 0; r < t->rows; ++r)
            for (int c = 0; c < t->cols; ++c)
                out.push_back({path + "[" + std::to_string(r) + "][" + std::to_string(c) + "]", t->scalar});
        break;
    case lang::TypeKind::Array:
        for (int64_t k = 0; k < t->count; ++k) flatten(types, t->element, path + "[" + std::to_string(k) + "]", out);
        break;
    case lang::TypeKind::Struct:
        for (const auto& f : types.fields(t)) flatten(types, f.type, path + "." + f.name, out);
        break;
    default: throw std::runtime_error("test() must return a plain value type, not " + lang::type_name(t));
    }
}

/// 64-bit integers do not fit a double: their components take two slots (high, low 32 bits).
inline bool is_wide_integer(lang::ScalarKind k) { return k == lang::ScalarKind::Int64 || k == lang::ScalarKind::UInt64; }

/// Slots of the result tensor the entry writes for `leaves`.
inline size_t result_slots(const std::vector<Leaf>& leaves) {
    size_t n = 0;
    for (const Leaf& l : leaves) n += is_wide_integer(l.kind) ? 2 : 1;
    return n;
}

/// The kernel-language entry that stores test()'s components into `_r` (as doubles, which
/// hold every other scalar exactly; a 64-bit integer as its two 32-bit halves).
inline std::string test_entry_source(const std::vector<Leaf>& leaves, const std::vector<BufferInput>& inputs = {},
                                     const std::string& uniforms = "") {
    std::string params, args;
    buffer_entry_parts(inputs, params, args);
    std::string s = "[__sg_kernel]\nvoid __sg_test(RWTensor<double, 1> _r" + params + ")\n{\n" + uniforms;
    for (const BufferInput& in : inputs)
        if (!in.global.empty()) s += "    " + in.global + " = " + in.name + ";\n";  // a global buffer
    s += "    let _v = test(" + args + ");\n";
    size_t slot = 0;
    for (const Leaf& l : leaves) {
        const std::string v = "_v" + l.path;
        if (is_wide_integer(l.kind)) {
            s += "    _r[" + std::to_string(slot++) + "] = double(uint(uint64_t(" + v + ") >> 32));\n";
            s += "    _r[" + std::to_string(slot++) + "] = double(uint(uint64_t(" + v + ") & 0xffffffffull));\n";
        } else {
            s += "    _r[" + std::to_string(slot++) + "] = double(" + v + ");\n";
        }
    }
    return s + "}\n";
}

/// The components of test()'s result from the entry's slots: 64-bit integers reassembled
/// exactly (as their bits; `values_match` compares those).
struct TestResult {
    std::vector<double> values;   ///< one per leaf; 64-bit integers rounded (for messages)
    std::vector<uint64_t> wide;   ///< one per leaf; the bits of 64-bit integers
};

inline TestResult unpack_result(const std::vector<Leaf>& leaves, const std::vector<double>& slots) {
    TestResult r;
    size_t slot = 0;
    for (const Leaf& l : leaves) {
        if (is_wide_integer(l.kind)) {
            uint64_t bits = (uint64_t(slots[slot]) << 32) | uint64_t(slots[slot + 1]);
            slot += 2;
            r.wide.push_back(bits);
            r.values.push_back(l.kind == lang::ScalarKind::Int64 ? double(int64_t(bits)) : double(bits));
        } else {
            r.wide.push_back(0);
            r.values.push_back(slots[slot++]);
        }
    }
    return r;
}

/// The distance between adjacent halves at `value` (2^-24 among the subnormals).
inline double half_ulp(double value) {
    int exponent = 0;
    std::frexp(value, &exponent);  // |value| in [2^(exponent-1), 2^exponent)
    return std::ldexp(1.0, std::max(exponent - 11, -24));
}

/// The exact 64-bit pattern an `// expect:` token names (decimal, optionally negative).
inline uint64_t expected_wide(const std::string& token) {
    if (token == "true" || token == "false") return token == "true";
    size_t used = 0;
    uint64_t v = token[0] == '-' ? uint64_t(std::stoll(token, &used)) : std::stoull(token, &used);
    if (used != token.size()) throw std::runtime_error("bad expected 64-bit integer '" + token + "'");
    return v;
}

/// The number tokens of an `// expect:` value, in order (as parse_expect flattens them).
inline std::vector<std::string> expect_tokens(const std::string& text) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < text.size()) {
        size_t start = text.find_first_not_of("(), \t", i);
        if (start == std::string::npos) break;
        size_t end = text.find_first_of("(), \t", start);
        out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        i = end == std::string::npos ? text.size() : end;
    }
    return out;
}

/// How a program file is loaded: from its own path (includes resolve beside it) with its
/// folder's `include` subfolder as the include path; `// link: FILE` headers link the exports
/// of FILE (beside the program), `// constants: N=3 F=2.5 B=true` override externs.
inline call::ModuleSetup program_setup(const fs::path& file) {
    call::ModuleSetup setup;
    setup.path = file.string();
    std::error_code ec;
    if (fs::is_directory(file.parent_path() / "include", ec)) setup.include_paths.push_back((file.parent_path() / "include").string());
    std::string source = fs::is_regular_file(file, ec) ? read_text(file) : std::string();
    for (const std::string& link : header_values(source, "link")) {
        fs::path linked = file.parent_path() / link;
        call::UserModule m(linked.filename().string(), read_text(linked), program_setup(linked));
        setup.linked.push_back(m.exports());
    }
    for (const std::string& line : header_values(source, "constants")) {
        std::istringstream in(line);
        for (std::string item; in >> item;) {
            size_t eq = item.find('=');
            if (eq == std::string::npos) throw std::runtime_error("bad constants header '" + line + "'");
            std::string v = item.substr(eq + 1);
            lang::ConstantScalar c;
            if (v == "true" || v == "false") c = {lang::ConstantScalar::Kind::Bool, v == "true", 0};
            else if (v.find_first_of(".e") != std::string::npos) c = {lang::ConstantScalar::Kind::Float, 0, std::stod(v)};
            else c = {lang::ConstantScalar::Kind::Int, std::stoll(v), 0};
            setup.overrides[item.substr(0, eq)] = {c};
        }
    }
    return setup;
}

/// The entry's statements that give uniform global `g` (`float g_scale;` at module scope) the
/// value of its `// input: g = VALUES` header: its scalar components in order, as for results.
inline std::string uniform_global_statements(const lang::TypeContext& types, const lang::VarDecl* g,
                                             const std::vector<std::string>& headers) {
    std::vector<Leaf> leaves;
    flatten(types, g->type, "", leaves);
    std::vector<double> values;
    if (!input_values(headers, g->name, parse_expect, values)) throw std::runtime_error("uniform global '" + g->name + "' needs an `// input: " + g->name + " = ...` header");
    if (values.size() != leaves.size())
        throw std::runtime_error("input '" + g->name + "': " + std::to_string(values.size()) + " values for " +
                                 std::to_string(leaves.size()) + " components");
    const std::string local = "__sg_uniform_" + g->name;
    std::string s = "    " + lang::type_name(g->type) + " " + local + ";\n";
    if (g->type->is_array()) {  // `T name[N]` in the kernel language
        const lang::Type* e = g->type;
        std::string dims;
        while (e->is_array()) {
            dims += "[" + std::to_string(e->count) + "]";
            e = e->element;
        }
        s = "    " + lang::type_name(e) + " " + local + dims + ";\n";
    }
    char text[64];
    for (size_t k = 0; k < leaves.size(); ++k) {
        std::snprintf(text, sizeof text, "%.17g", values[k]);
        s += "    " + local + leaves[k].path + " = " + lang::scalar_name(leaves[k].kind) + "(" + text + ");\n";
    }
    return s + "    " + g->name + " = " + local + ";\n";
}

/// A test() program prepared for compilation: the checked module and the entry glue.
struct TestProgram {
    std::unique_ptr<call::UserModule> module;
    call::Glue glue;
    std::vector<Leaf> leaves;
    std::vector<BufferInput> inputs;  ///< test()'s buffer parameters, in order
};

/// Parses and checks `source` (throws lang::CompileError) and builds the glue for its test().
inline TestProgram prepare_test_program(const std::string& name, const std::string& source,
                                        const call::ModuleSetup& setup = {}) {
    TestProgram p;
    p.module = std::make_unique<call::UserModule>(name, source, setup);
    auto fns = p.module->functions("test");
    if (fns.size() != 1)
        throw std::runtime_error("the program must declare exactly one `test()` (parameters: buffers with `// input:`)");
    flatten(p.module->types(), fns[0]->result_type, "", p.leaves);
    const std::vector<std::string> headers = header_values(source, "input");
    for (const lang::VarDecl* param : fns[0]->params)
        p.inputs.push_back(buffer_input(p.module->types(), param->name, param->type, headers, parse_expect));
    std::string uniforms;
    for (const lang::VarDecl* g : fns[0]->static_globals)  // uniform globals test() uses
        if (lang::is_uniform_global(g)) uniforms += uniform_global_statements(p.module->types(), g, headers);
    for (const lang::VarDecl* g : fns[0]->static_globals) {  // global buffers test() uses
        if (!lang::is_global_resource(g)) continue;
        p.inputs.push_back(buffer_input(p.module->types(), g->name, g->type, headers, parse_expect));
        p.inputs.back().global = g->name;
        p.inputs.back().name = "__sg_global_" + g->name;
    }
    p.glue.source = test_entry_source(p.leaves, p.inputs, uniforms);
    p.glue.entry = "__sg_test";
    p.glue.params = {call::GlueParam{"_r", call::ParamSource::Result, -1, false, false}};
    for (size_t k = 0; k < p.inputs.size(); ++k)
        p.glue.params.push_back(call::GlueParam{p.inputs[k].name, call::ParamSource::ArgTensor, int(k), true, false});
    return p;
}

/// The parameter block of a test entry: one thread writing `count` doubles to `data` (host
/// memory for the CPU, device memory for CUDA), fault record at `fault` (nullable).
inline std::vector<uint8_t> test_entry_block(const call::CompiledKernel& k, const void* data, size_t count,
                                             codegen::FaultRecord* fault, const std::vector<BufferInput>& inputs = {},
                                             const std::vector<const void*>& input_data = {}) {
    const codegen::ParamLayout& layout = k.generated.layout;
    if (layout.fields.size() != 1 + inputs.size() || !layout.fields[0].type->is_tensor())
        throw std::runtime_error("unexpected parameter layout of the test entry");
    std::vector<uint8_t> block(layout.size, 0);
    codegen::CallHeader header{};
    for (int64_t& d : header.shape) d = 1;
    header.total = 1;
    header.rank = 1;
    header.fault = fault;
    std::memcpy(block.data(), &header, sizeof header);
    // One view, written as the call layer's pack() writes views: data, shape[1], strides[1], inner[2].
    const codegen::TensorFieldLayout& t = layout.fields[0].tensor;
    const int64_t shape = int64_t(count), stride = 1, inner[2] = {0, 0};
    std::memcpy(block.data() + t.data, &data, sizeof data);
    std::memcpy(block.data() + t.shape, &shape, sizeof shape);
    std::memcpy(block.data() + t.strides, &stride, sizeof stride);
    std::memcpy(block.data() + t.inner, inner, sizeof inner);
    for (size_t b = 0; b < inputs.size(); ++b) {  // the buffers: dense, components 1 apart
        const codegen::TensorFieldLayout& v = layout.fields[1 + b].tensor;
        const void* p = input_data[b];
        const int64_t n = inputs[b].count, step = inputs[b].components, in[2] = {1, inputs[b].inner1};
        std::memcpy(block.data() + v.data, &p, sizeof p);
        std::memcpy(block.data() + v.shape, &n, sizeof n);
        std::memcpy(block.data() + v.strides, &step, sizeof step);
        std::memcpy(block.data() + v.inner, in, sizeof in);
    }
    return block;
}

/// Runs a compiled test entry on the CPU: one thread, `count` doubles out.
inline std::vector<double> run_test_kernel(const call::CompiledKernel& k, size_t count,
                                           std::vector<BufferInput> inputs = {}) {
    std::vector<double> out(count, std::nan(""));
    codegen::FaultRecord fault{};
    std::vector<const void*> input_data;
    for (BufferInput& in : inputs) input_data.push_back(in.bytes.data());
    std::vector<uint8_t> block = test_entry_block(k, out.data(), count, &fault, inputs, input_data);
    runtime::cpu_launch(runtime::cpu_kernel_entry(*k.loaded), block.data(), 1);
    if (fault.code != 0) throw std::runtime_error("kernel reported fault code " + std::to_string(fault.code));
    return out;
}

/// Compares results with expectations: exact for integers (64-bit ones bit for bit against the
/// written decimal) and bools, 1e-5 relative for float (with a 1e-6 absolute floor near zero),
/// 1e-12 relative for double, and for half within the spacing of halves at the expected value
/// (one ulp: a result may differ from the exactly computed value in its last bit).
inline ::testing::AssertionResult values_match(const std::vector<Leaf>& leaves, const TestResult& result,
                                               const std::vector<double>& want,
                                               const std::vector<std::string>& want_tokens) {
    const std::vector<double>& got = result.values;
    if (want.size() != leaves.size())
        return ::testing::AssertionFailure()
               << "expect: has " << want.size() << " components, test() returns " << leaves.size();
    std::ostringstream err;
    for (size_t k = 0; k < want.size(); ++k) {
        double g = got[k], w = want[k];
        bool ok;
        if (is_wide_integer(leaves[k].kind)) ok = result.wide[k] == expected_wide(want_tokens.at(k));
        else if (std::isnan(w)) ok = std::isnan(g);
        else if (std::isinf(w)) ok = g == w;
        else if (leaves[k].kind == lang::ScalarKind::Double) ok = std::fabs(g - w) <= 1e-12 * std::fabs(w) + 1e-14;
        else if (leaves[k].kind == lang::ScalarKind::Half)
            ok = std::fabs(g - w) <= half_ulp(w);
        else if (lang::is_floating(leaves[k].kind)) ok = std::fabs(g - w) <= 1e-5 * std::fabs(w) + 1e-6;
        else ok = g == w;
        if (!ok) err << "  component " << k << " (_v" << leaves[k].path << "): got " << g << ", expected " << w << "\n";
    }
    if (err.str().empty()) return ::testing::AssertionSuccess();
    std::ostringstream all;
    all.precision(9);
    all << "result (";
    for (size_t k = 0; k < got.size(); ++k) all << (k ? ", " : "") << got[k];
    return ::testing::AssertionFailure() << all.str() << ")\n" << err.str();
}

/// A program compiles without warnings except the ones its `// warning: L:C: TEXT` headers name.
inline void check_warnings(const std::string& rendered, const std::vector<std::string>& expected) {
    std::vector<std::string> lines;
    std::istringstream in(rendered);
    for (std::string line; std::getline(in, line);)
        if (line.find(": warning") != std::string::npos) lines.push_back(line);
    std::vector<bool> matched(lines.size(), false);
    for (const std::string& w : expected) {
        int line = 0, col = 0;
        ASSERT_EQ(std::sscanf(w.c_str(), "%d:%d:", &line, &col), 2) << "bad warning header '" << w << "'";
        std::string text = w.substr(w.find(':', w.find(':') + 1) + 1);
        text.erase(0, text.find_first_not_of(' '));
        std::string at = ":" + std::to_string(line) + ":" + std::to_string(col) + ": warning";
        bool found = false;
        for (size_t k = 0; k < lines.size(); ++k)
            if (lines[k].find(at) != std::string::npos && lines[k].find(text) != std::string::npos)
                found = matched[k] = true;
        EXPECT_TRUE(found) << "missing warning " << w << "\n" << rendered;
    }
    for (size_t k = 0; k < lines.size(); ++k) EXPECT_TRUE(matched[k]) << "unexpected " << lines[k];
}

/// Compiles, runs and checks one program against its `// expect:` header.
inline void check_program(const std::string& name, const std::string& source, const call::ModuleSetup& setup = {}) {
    auto expects = header_values(source, "expect");
    ASSERT_EQ(expects.size(), 1u) << "a program needs exactly one `// expect:` header";
    std::vector<double> want = parse_expect(expects[0]);
    try {
        TestProgram p = prepare_test_program(name, source, setup);
        check_warnings(p.module->warnings(), header_values(source, "warning"));
        call::CompiledKernel k = call::compile_kernel(*p.module, p.glue, {}, DeviceType::CPU, -1);
        TestResult got = unpack_result(p.leaves, run_test_kernel(k, result_slots(p.leaves), p.inputs));
        EXPECT_TRUE(values_match(p.leaves, got, want, expect_tokens(expects[0]))) << "IR of the entry:\n" << k.ir_text;
    } catch (const lang::CompileError& e) {
        FAIL() << "compile error:\n" << e.what();
    }
}

// ---------------------------------------------------------------- CUDA compile checks

inline void check_program_cuda(const std::string& name, const std::string& source,
                               const call::ModuleSetup& setup = {}) {
    try {
        TestProgram p = prepare_test_program(name, source, setup);
        call::CompiledKernel k = call::generate(*p.module, p.glue, DeviceType::CUDA, {});
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped));
        if (skipped) GTEST_SKIP() << "neither NVRTC nor nvcc found (pip install nvidia-cuda-nvrtc)";
    } catch (const lang::CompileError& e) {
        FAIL() << "compile error:\n" << e.what();
    }
}

/// Runs a compiled CUDA test entry on device 0: one thread, `count` doubles out.
inline std::vector<double> run_test_kernel_cuda(const call::CompiledKernel& k, size_t count,
                                                const std::vector<BufferInput>& inputs = {}) {
    const runtime::CudaDriver& d = runtime::cuda_driver();
    runtime::CudaContextGuard guard(runtime::cuda_primary_context(0));
    const size_t flag_offset = count * sizeof(double);
    runtime::CuDevicePtr memory = 0;
    runtime::check_cuda(d.cuMemAlloc(&memory, flag_offset + sizeof(codegen::FaultRecord)), "cuMemAlloc");
    struct Free {
        runtime::CuDevicePtr p;
        ~Free() { runtime::cuda_driver().cuMemFree(p); }
    } free_at_exit{memory};
    std::vector<double> out(count, std::nan(""));
    codegen::FaultRecord fault{};
    runtime::check_cuda(d.cuMemcpyHtoD(memory, out.data(), flag_offset), "cuMemcpyHtoD");
    runtime::check_cuda(d.cuMemcpyHtoD(memory + flag_offset, &fault, sizeof fault), "cuMemcpyHtoD");
    struct FreeAll {
        std::vector<runtime::CuDevicePtr> p;
        ~FreeAll() {
            for (runtime::CuDevicePtr b : p) runtime::cuda_driver().cuMemFree(b);
        }
    } buffers;
    std::vector<const void*> input_data;
    for (const BufferInput& in : inputs) {
        runtime::CuDevicePtr b = 0;
        runtime::check_cuda(d.cuMemAlloc(&b, in.bytes.size()), "cuMemAlloc");
        buffers.p.push_back(b);
        runtime::check_cuda(d.cuMemcpyHtoD(b, in.bytes.data(), in.bytes.size()), "cuMemcpyHtoD");
        input_data.push_back(reinterpret_cast<const void*>(b));
    }
    std::vector<uint8_t> block = test_entry_block(k, reinterpret_cast<const void*>(memory), count,
                                                  reinterpret_cast<codegen::FaultRecord*>(memory + flag_offset), inputs,
                                                  input_data);
    runtime::cuda_launch(runtime::cuda_kernel_entry(*k.loaded), block.data(), block.size(), 1, nullptr);
    runtime::check_cuda(d.cuCtxSynchronize(), "cuCtxSynchronize");
    runtime::check_cuda(d.cuMemcpyDtoH(out.data(), memory, flag_offset), "cuMemcpyDtoH");
    runtime::check_cuda(d.cuMemcpyDtoH(&fault, memory + flag_offset, sizeof fault), "cuMemcpyDtoH");
    if (fault.code != 0) throw std::runtime_error("kernel reported fault code " + std::to_string(fault.code));
    return out;
}

/// Compiles and runs a program on CUDA device 0 and checks it like check_program. Skipped, with
/// the reason, on machines without a GPU (CI): there check_program_cuda still compiles it.
inline void check_program_on_gpu(const std::string& name, const std::string& source,
                                 const call::ModuleSetup& setup = {}) {
    if (!runtime::cuda_available()) GTEST_SKIP() << "no CUDA device: " << runtime::cuda_driver_status();
    auto expects = header_values(source, "expect");
    ASSERT_EQ(expects.size(), 1u) << "a program needs exactly one `// expect:` header";
    std::vector<double> want = parse_expect(expects[0]);
    try {
        TestProgram p = prepare_test_program(name, source, setup);
        call::CompiledKernel k = call::compile_kernel(*p.module, p.glue, {}, DeviceType::CUDA, 0);
        TestResult got = unpack_result(p.leaves, run_test_kernel_cuda(k, result_slots(p.leaves), p.inputs));
        EXPECT_TRUE(values_match(p.leaves, got, want, expect_tokens(expects[0]))) << "IR of the entry:\n" << k.ir_text;
    } catch (const lang::CompileError& e) {
        FAIL() << "compile error:\n" << e.what();
    }
}

// ---------------------------------------------------------------- must-fail programs

struct ExpectedError {
    std::string file;  ///< "" for the program's own file, else the end of the file's name
    int line = 0;  ///< 1-based, in the compiled text
    int col = 0;
    std::string text;
};

/// Parses `// error: L:C: TEXT` headers; `+N` lines are offset by `appended_first_line - 1`.
inline std::vector<ExpectedError> parse_expected_errors(const std::string& header_source, int appended_first_line = 1) {
    std::vector<ExpectedError> out;
    for (const std::string& v : header_values(header_source, "error")) {
        ExpectedError e;
        bool relative = !v.empty() && v[0] == '+';
        size_t start = relative ? 1 : 0;
        if (!v.empty() && !relative && !std::isdigit(static_cast<unsigned char>(v[0]))) {
            start = v.find(':');  // FILE:L:C: a diagnostic in another file
            if (start == std::string::npos) throw std::runtime_error("bad error header '" + v + "'");
            e.file = v.substr(0, start++);
        }
        if (std::sscanf(v.c_str() + start, "%d:%d:", &e.line, &e.col) != 2)
            throw std::runtime_error("bad error header '" + v + "' (want L:C: message)");
        if (relative) e.line += appended_first_line - 1;
        size_t at = v.find(':', v.find(':', start) + 1);
        e.text = v.substr(at + 1);
        e.text.erase(0, e.text.find_first_not_of(' '));
        out.push_back(e);
    }
    return out;
}

/// Compiles `source` as a module and, when it has a test(), through the CPU code generator
/// (errors after sema come from lowering); returns the diagnostics, empty when it compiled.
inline std::vector<lang::Diagnostic> compile_for_errors(const std::string& name, const std::string& source,
                                                        std::string* rendered, const call::ModuleSetup& setup = {}) {
    try {
        call::UserModule module(name, source, setup);
        if (module.functions("test").size() == 1) {
            TestProgram p = prepare_test_program(name, source, setup);
            call::generate(*p.module, p.glue, DeviceType::CPU, {});
        }
    } catch (const lang::CompileError& e) {
        *rendered = e.what();
        return e.diagnostics;
    }
    return {};
}

/// Checks a must-fail program: every `// error:` is reported (the first one first), and the
/// `// error-code:` number is on one of them.
inline void check_errors(const std::string& name, const std::string& source, const std::string& header_source,
                         int appended_first_line = 1, const call::ModuleSetup& setup = {}) {
    std::vector<ExpectedError> want = parse_expected_errors(header_source, appended_first_line);
    ASSERT_FALSE(want.empty()) << "a must-fail program needs a `// error:` header";
    std::vector<int> codes;
    for (const std::string& c : header_values(header_source, "error-code")) codes.push_back(std::stoi(c));
    std::string rendered;
    std::vector<lang::Diagnostic> got;
    try {
        got = compile_for_errors(name, source, &rendered, setup);
    } catch (const lang::InternalError& e) {
        FAIL() << "internal compiler error instead of a diagnostic: " << e.what();
    }
    std::vector<const lang::Diagnostic*> errors;
    for (const auto& d : got)
        if (d.severity == lang::Severity::Error) errors.push_back(&d);
    ASSERT_FALSE(errors.empty()) << "the program compiled, but should fail with: " << want[0].text << "\n" << source;
    // Every expected error is in the module's own file (named as UserModule names it), never
    // in the glue.
    const std::string file = name.find('.') == std::string::npos ? name + ".slang" : name;
    auto matches = [&](const lang::Diagnostic& d, const ExpectedError& e) {
        const lang::ResolvedLocation& at = d.location;
        bool same_file = e.file.empty() ? at.file == file
                                        : at.file.size() >= e.file.size() &&
                                              at.file.compare(at.file.size() - e.file.size(), e.file.size(), e.file) == 0;
        return at.valid() && same_file && at.line == e.line && at.col == e.col &&
               d.message.find(e.text) != std::string::npos;
    };
    for (const std::string& text : header_values(header_source, "rendered"))
        EXPECT_NE(rendered.find(text), std::string::npos) << "the rendered diagnostics lack '" << text << "'\n" << rendered;
    EXPECT_TRUE(matches(*errors[0], want[0]))
        << "first error differs from " << want[0].line << ":" << want[0].col << ": " << want[0].text << "\n"
        << rendered;
    std::vector<const lang::Diagnostic*> matched;
    for (const ExpectedError& e : want) {
        const lang::Diagnostic* hit = nullptr;
        for (const lang::Diagnostic* d : errors)
            if (matches(*d, e)) hit = d;
        EXPECT_TRUE(hit != nullptr) << "missing error " << e.line << ":" << e.col << ": " << e.text << "\n" << rendered;
        if (hit) matched.push_back(hit);
    }
    for (int code : codes) {
        bool found = false;
        for (const lang::Diagnostic* d : matched) found |= d->code == code;
        EXPECT_TRUE(found) << "no matched error carries code " << code << "\n" << rendered;
    }
}

}  // namespace sg::test
