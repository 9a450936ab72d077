// tests/cpp/test_no_internal_errors.cpp — every program of tests/lang (the feature programs and
// the must-fail cases in errors/) through every entry point of the compiler driver, asserting
// that none reaches an internal compiler error (docs/design.md, "Errors are located or
// internal"): a program either compiles or stops with located diagnostics (CompileError), in
// every mode.
//
// The entry points (driver::compile with the options its callers use):
//   load       parse only (Phase::Load: shadegradc --emit ast)
//   check      load and sema (Phase::Sema: the whole-module check of every kernel compile)
//   lower      every function lowered, both derivatives of every differentiable one requested
//              (Derivatives::AllRequestable), autodiff, the IR passes with the verifier, IR text
//   cpu, cuda  the same, then code generation for each target (codegen::generate_functions)
//   each       shadegradc's default: each [Differentiable] function's derivatives as it is
//              lowered (Derivatives::EachLowered), CPU code
// Files are read from their path, so includes and imports resolve beside them as the program
// runners resolve them (the folder, then its include/ subfolder).
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "test_programs_harness.h"

namespace sg::test {
namespace {

std::vector<std::string> every_program() {
    return list_lang_files(".slang", [](const std::string& folder) { return folder != "conformance"; });
}

struct Mode {
    const char* name;
    driver::Phase stop;
    driver::Derivatives derivatives;
    bool code;
    DeviceType target;
};

constexpr Mode kModes[] = {
    {"load", driver::Phase::Load, driver::Derivatives::None, false, DeviceType::CPU},
    {"check", driver::Phase::Sema, driver::Derivatives::None, false, DeviceType::CPU},
    {"lower", driver::Phase::Everything, driver::Derivatives::AllRequestable, false, DeviceType::CPU},
    {"cpu", driver::Phase::Everything, driver::Derivatives::AllRequestable, true, DeviceType::CPU},
    {"cuda", driver::Phase::Everything, driver::Derivatives::AllRequestable, true, DeviceType::CUDA},
    {"each", driver::Phase::Everything, driver::Derivatives::EachLowered, true, DeviceType::CPU},
};

/// Compiles `rel` in `mode`; "" when it compiled or stopped with diagnostics, else what escaped.
std::string internal_failure(const std::string& rel, const Mode& mode) {
    const fs::path path = lang_tests_dir() / rel;
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    lang::SourceLoader loader({(path.parent_path() / "include").string()});
    driver::Input input;
    input.roots.push_back({path.filename().string(), read_text(path), path.string(), &loader, nullptr});
    driver::Options options;
    options.scope = driver::Scope::Functions;
    options.concrete_tensors = true;
    options.stop_after = mode.stop;
    options.derivatives = mode.derivatives;
    options.verify = mode.stop == driver::Phase::Everything;
    options.emit_ir = mode.stop == driver::Phase::Everything;
    options.emit_code = mode.code;
    options.target = mode.target;
    driver::Result result;
    try {
        driver::compile({sources, ast, types, diags}, input, options, result);
    } catch (const lang::CompileError&) {
        // a located user error: the expected answer for must-fail programs (and for those that
        // use a construct a mode does not take, e.g. an unbound extern constant)
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

class EveryEntryPoint : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryEntryPoint, NoInternalError) {
    for (const Mode& mode : kModes) {
        const std::string failure = internal_failure(GetParam(), mode);
        EXPECT_EQ(failure, "") << GetParam() << " (" << mode.name << ")";
    }
}

INSTANTIATE_TEST_SUITE_P(Lang, EveryEntryPoint, ::testing::ValuesIn(every_program()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

// The suite must not pass vacuously when the folder moves.
TEST(EveryEntryPointSuite, CoversTheProgramsAndTheMustFailCases) {
    const std::vector<std::string> all = every_program();
    size_t errors = 0;
    for (const std::string& rel : all) errors += rel.rfind("errors/", 0) == 0;
    EXPECT_GE(all.size() - errors, 150u);
    EXPECT_GE(errors, 100u);
}

}  // namespace
}  // namespace sg::test
