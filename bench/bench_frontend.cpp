// bench/bench_frontend.cpp — front-end benchmark: the whole compiler front end and CPU code
// generation of a generated, realistic 1,000-line module (tests/support/source_generator.h).
//
// One run = parse, sema, lowering of every function (tensor kernels with gradient-bound tensor
// types), forward and backward autodiff of every [Differentiable] function, inline_calls /
// strip_detach / dead_code, CPU C++ generation. Reports the median over the runs, per phase and
// in total, after one warm-up run. The target is a median under 100 ms; with --generic, the module
// opens with 30 generic functions instantiated 100 times in all (source_generator.h's generic
// units, each instantiation checked, lowered and differentiated), and the target is 150 ms.
//
//   bench_frontend [--lines N | --file FILE] [--generic] [--runs R] [--write-results]
//                  [--results-dir DIR] [--dump FILE]
//
//   --lines N          size of the generated module (default 1000)
//   --generic          the generated module with generic units (results: frontend_generic.*)
//   --file FILE        benchmark FILE instead of a generated module (to profile a slow input)
//   --runs R           measured runs (default 20)
//   --write-results    write frontend.json and frontend.md to the results directory
//   --results-dir DIR  default: bench/results of the source tree
//   --dump FILE        write the generated module to FILE (to profile it with shadegradc)
//
// Exit status: 0, or 1 when the module does not compile (a regression), 2 on usage errors.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frontend_pipeline.h"
#include "source_generator.h"

#ifndef SG_SOURCE_DIR
#define SG_SOURCE_DIR "."
#endif

namespace {

constexpr double kTargetMs = 100.0;
constexpr double kGenericTargetMs = 150.0;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int usage() {
    std::fprintf(stderr,
                 "usage: bench_frontend [--lines N | --file FILE] [--generic] [--runs R] [--write-results] "
                 "[--results-dir DIR] [--dump FILE]\n");
    return 2;
}

std::string iso_date() {
    std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
    return buf;
}

/// The 1-minute load average (Linux), to read timings taken on a shared machine; -1 elsewhere.
double load_average() {
    std::ifstream in("/proc/loadavg");
    double load = -1;
    in >> load;
    return in ? load : -1;
}

bool write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    return bool(out);
}

}  // namespace

int main(int argc, char** argv) {
    size_t lines = 1000;
    int runs = 20;
    bool write_results = false, generic = false;
    std::string results_dir = std::string(SG_SOURCE_DIR) + "/bench/results", dump, file;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        if (a == "--lines" && has_value) lines = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--runs" && has_value) runs = std::atoi(argv[++i]);
        else if (a == "--results-dir" && has_value) results_dir = argv[++i];
        else if (a == "--dump" && has_value) dump = argv[++i];
        else if (a == "--file" && has_value) file = argv[++i];
        else if (a == "--write-results") write_results = true;
        else if (a == "--generic") generic = true;
        else return usage();
    }
    if (lines == 0 || runs <= 0) return usage();

    std::string source;
    if (file.empty()) {
        source = generic ? sg::test::generic_module(lines) : sg::test::realistic_module(lines);
    } else {
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "bench_frontend: cannot read %s\n", file.c_str());
            return 1;
        }
        source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    size_t source_lines = size_t(std::count(source.begin(), source.end(), '\n'));
    if (!dump.empty() && !write_text(dump, source)) {
        std::fprintf(stderr, "bench_frontend: cannot write %s\n", dump.c_str());
        return 1;
    }
    sg::test::FrontendOptions options;
    options.concrete_tensors = true;
    options.differentiate_all = true;
    options.codegen = true;

    sg::test::FrontendResult warmup = sg::test::run_frontend("bench.slang", source, options);
    if (!warmup.ok) {
        std::fprintf(stderr, "bench_frontend: the generated module does not compile:\n%s", warmup.diagnostics.c_str());
        return 1;
    }
    std::vector<double> total, parse, sema, lower, autodiff, passes, codegen;
    for (int r = 0; r < runs; ++r) {
        sg::test::FrontendTimes t = sg::test::run_frontend("bench.slang", source, options).times;
        total.push_back(t.total_ms());
        parse.push_back(t.parse_ms);
        sema.push_back(t.sema_ms);
        lower.push_back(t.lower_ms);
        autodiff.push_back(t.autodiff_ms);
        passes.push_back(t.passes_ms);
        codegen.push_back(t.codegen_ms);
    }
    double med = median(total);
    const double target = generic ? kGenericTargetMs : kTargetMs;
    const char* what = generic ? "with 30 generic functions instantiated 100 times, " : "";
    std::printf("front end + CPU codegen, %s%s%zu-line module (%zu bytes, %zu IR functions, %zu bytes of C++)\n",
                file.empty() ? "" : (file + ", ").c_str(), what, source_lines, source.size(), warmup.ir_functions,
                warmup.output_bytes);
    std::printf("  median of %d runs: %.2f ms (min %.2f, max %.2f; target < %.0f ms: %s)\n", runs, med,
                *std::min_element(total.begin(), total.end()), *std::max_element(total.begin(), total.end()),
                target, med < target ? "met" : "MISSED");
    std::printf("  phases (median ms): parse %.2f  sema %.2f  lower %.2f  autodiff %.2f  passes %.2f  codegen %.2f\n",
                median(parse), median(sema), median(lower), median(autodiff), median(passes), median(codegen));

    if (write_results) {
        char json[1024];
        std::snprintf(json, sizeof json,
                      "{\n  \"benchmark\": \"%s\",\n  \"date\": \"%s\",\n  \"module_lines\": %zu,\n"
                      "  \"module_bytes\": %zu,\n  \"ir_functions\": %zu,\n  \"runs\": %d,\n  \"median_ms\": %.3f,\n"
                      "  \"min_ms\": %.3f,\n  \"target_ms\": %.0f,\n  \"load_average\": %.2f,\n"
                      "  \"phases_median_ms\": {\"parse\": %.3f, \"sema\": %.3f, \"lower\": %.3f, \"autodiff\": %.3f, "
                      "\"passes\": %.3f, \"codegen\": %.3f}\n}\n",
                      generic ? "frontend_generic" : "frontend", iso_date().c_str(), source_lines, source.size(),
                      warmup.ir_functions, runs, med, *std::min_element(total.begin(), total.end()), target, load_average(), median(parse),
                      median(sema), median(lower), median(autodiff), median(passes), median(codegen));
        char md[512];
        std::snprintf(md, sizeof md,
                      "- %s — front end + CPU codegen of a %zu-line module%s: **%.1f ms** median over %d runs "
                      "(target < %.0f ms; parse %.1f, sema %.1f, lower %.1f, autodiff %.1f, passes %.1f, "
                      "codegen %.1f ms; load average %.1f)\n",
                      iso_date().c_str(), source_lines, generic ? " with 30 generic functions instantiated 100 times" : "",
                      med, runs, target, median(parse), median(sema),
                      median(lower), median(autodiff), median(passes), median(codegen), load_average());
        std::string stem = results_dir + (generic ? "/frontend_generic" : "/frontend");
        std::string json_path = stem + ".json", md_path = stem + ".md";
        if (!write_text(json_path, json) || !write_text(md_path, md)) {
            std::fprintf(stderr, "bench_frontend: cannot write %s.{json,md}\n", stem.c_str());
            return 1;
        }
        std::printf("  wrote %s and %s\n", json_path.c_str(), md_path.c_str());
    }
    return 0;
}
