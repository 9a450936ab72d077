// tests/cpp/test_runtime.cpp — the CPU backend runtime: content hash, disk cache, the module
// cache shared with CUDA, module loading (memory / disk / compile, corruption, errors,
// concurrency) and the thread pool.
#include "runtime/content_hash.h"
#include "runtime/cpu_module.h"
#include "runtime/disk_cache.h"
#include "runtime/module_cache.h"
#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sg::runtime {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// More threads than this machine's cores, so chunking and contention are exercised everywhere;
// set before the pool exists (static initialization), without overriding the user's choice.
const bool kThreadsConfigured = (::setenv("SHADEGRAD_NUM_THREADS", "4", 0), true);

// ---- content hash ---------------------------------------------------------------------------

TEST(ContentHash, KnownValuesAreStable) {
    // Pinned: these must never change, or every cache on disk silently goes stale.
    EXPECT_EQ(content_hash(""), "20ffd32c930c788e6c36de15dde9d8e6");
    EXPECT_EQ(content_hash("a"), "0fff5fbef0f8a6c979cda9f1fa6ec05f");
    EXPECT_EQ(content_hash("abc"), "eeb737d68dabe9db7350173919f4f4f4");
    std::string long_input;
    for (int i = 0; i < 1000; ++i) long_input += static_cast<char>(i * 7 + 3);
    EXPECT_EQ(content_hash(long_input), "10b2736949be3e04568c67d0bcdb9f6c");
}

TEST(ContentHash, DistinguishesSimilarInputs) {
    std::set<std::string> seen;
    size_t inserted = 0;
    auto add = [&](const std::string& data) {
        seen.insert(content_hash(data));
        ++inserted;
    };
    for (int i = 0; i < 100000; ++i) add("kernel_" + std::to_string(i));
    std::string zeros;
    for (int length = 0; length <= 64; ++length, zeros.push_back('\0')) add(zeros);  // length only
    std::string base(256, 'x');
    for (size_t bit = 0; bit < base.size() * 8; ++bit) {
        std::string flipped = base;
        flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
        add(flipped);
    }
    EXPECT_EQ(seen.size(), inserted);
}

TEST(ContentHash, HexRoundTrip) {
    const Hash128 hash = content_hash_128("round trip");
    Hash128 parsed;
    ASSERT_TRUE(parse_hex(to_hex(hash), parsed));
    EXPECT_EQ(parsed, hash);
    EXPECT_FALSE(parse_hex("ABCDEF0123456789abcdef0123456789", parsed));  // uppercase
    EXPECT_FALSE(parse_hex("abc", parsed));
}

// ---- fixtures -------------------------------------------------------------------------------

// Each test gets an empty cache directory and an empty memory cache.
class RuntimeTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sg_runtime_test_XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        set_cache_directory_for_testing(dir_);
        clear_cpu_module_cache();
    }
    void TearDown() override {
        clear_cpu_module_cache();
        set_cache_directory_for_testing("");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string dir_;
};

const char* const kKernelSource = R"(
#include <cstdint>
struct Params { int64_t* out; int64_t scale; };
// += rather than =: an element visited twice shows up as a wrong value.
extern "C" void sg_kernel(const void* p, int64_t begin, int64_t end) {
    const Params* params = static_cast<const Params*>(p);
    for (int64_t i = begin; i < end; ++i) params->out[i] += i * params->scale + 1;
}
)";

struct KernelParams {
    int64_t* out;
    int64_t scale;
};

// Runs sg_kernel of `module` over n elements and checks every one.
void expect_kernel_works(const CpuModule& module, int64_t n) {
    auto fn = reinterpret_cast<CpuKernelFn>(module.symbol("sg_kernel"));
    std::vector<int64_t> out(static_cast<size_t>(n), 0);
    KernelParams params{out.data(), 3};
    cpu_launch(fn, &params, n);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += out[size_t(i)] != i * 3 + 1;
    EXPECT_EQ(wrong, 0) << "n = " << n;
}

void overwrite_entry(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string read_entry(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---- disk cache -----------------------------------------------------------------------------

using DiskCache = RuntimeTest;

TEST_F(DiskCache, StoreLoadAndRejectDamage) {
    const std::string key = content_hash("some key");
    DiskCacheLookup lookup;
    EXPECT_FALSE(disk_cache_load("test", key, &lookup));
    EXPECT_EQ(lookup, DiskCacheLookup::Missing);

    const std::string payload = "payload\0with zero"s + std::string(1000, 'p');
    ASSERT_TRUE(disk_cache_store("test", key, payload));
    const std::string path = disk_cache_entry_path("test", key);
    EXPECT_EQ(path, dir_ + "/test/" + key.substr(0, 2) + "/" + key + ".bin");
    EXPECT_EQ(disk_cache_load("test", key, &lookup), payload);
    EXPECT_EQ(lookup, DiskCacheLookup::Hit);

    const std::string good = read_entry(path);
    std::vector<std::string> damaged = {
        "",                                           // empty
        good.substr(0, 40),                           // truncated header
        good.substr(0, good.size() - 1),              // truncated payload
        good + "x",                                   // trailing garbage
    };
    for (size_t offset : {size_t(0), size_t(8), size_t(20), size_t(35), size_t(45), size_t(60),
                          size_t(64), good.size() - 1}) {
        std::string flipped = good;
        flipped[offset] = static_cast<char>(flipped[offset] ^ 0x10);
        damaged.push_back(flipped);
    }
    for (size_t i = 0; i < damaged.size(); ++i) {
        overwrite_entry(path, damaged[i]);
        EXPECT_FALSE(disk_cache_load("test", key, &lookup)) << "damage #" << i;
        EXPECT_EQ(lookup, DiskCacheLookup::Invalid) << "damage #" << i;
        EXPECT_FALSE(fs::exists(path)) << "damaged entry #" << i << " was not removed";
    }
    // An entry stored under another key is not accepted under this one.
    const std::string other = content_hash("other key");
    ASSERT_TRUE(disk_cache_store("test", other, payload));
    fs::copy_file(disk_cache_entry_path("test", other), path);
    EXPECT_FALSE(disk_cache_load("test", key, &lookup));
    EXPECT_EQ(lookup, DiskCacheLookup::Invalid);
}

TEST_F(DiskCache, RejectsUnsafeNames) {
    EXPECT_THROW(disk_cache_load("../x", content_hash("k")), std::invalid_argument);
    EXPECT_THROW(disk_cache_store("cpu", "../../etc/passwd", "x"), std::invalid_argument);
}

// ---- the module cache shared by the backends --------------------------------------------------

using ModuleCacheTest = RuntimeTest;

TEST_F(ModuleCacheTest, DiskEntriesAreDecodedAndUnusableOnesRebuilt) {
    const std::string key = content_hash("module cache key");
    int compiles = 0;
    bool usable = true;
    auto decode = [&](const std::string& payload) {
        return usable ? std::optional<std::string>("decoded " + payload) : std::nullopt;
    };
    auto compile = [&] {
        return CompileResult<std::string>{"built", "bytes " + std::to_string(++compiles)};
    };
    auto load = [&](bool& compiled) {
        return load_or_compile<std::string>("test", key, decode, compile, compiled);
    };
    bool compiled = false;
    EXPECT_EQ(load(compiled), "built");
    EXPECT_TRUE(compiled);
    EXPECT_EQ(load(compiled), "decoded bytes 1");  // stored by the first load
    EXPECT_FALSE(compiled);
    usable = false;  // intact but unusable: removed and rebuilt
    EXPECT_EQ(load(compiled), "built");
    EXPECT_TRUE(compiled);
    EXPECT_EQ(disk_cache_load("test", key), "bytes 2");
}

TEST_F(ModuleCacheTest, OneLoadPerKeyWhileTheValueIsHeld) {
    struct Value {};  // a type of its own: a cache no other test touches
    ModuleCache<Value>& cache = ModuleCache<Value>::instance();
    std::atomic<int> loads{0};
    auto load = [&] {
        ++loads;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the others queue up
        return std::make_shared<Value>();
    };
    std::vector<std::shared_ptr<Value>> held(8);
    std::vector<std::thread> threads;
    for (auto& value : held) threads.emplace_back([&] { value = cache.get_or_load("k", load); });
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(loads.load(), 1);
    for (const auto& value : held) EXPECT_EQ(value, held[0]);
    EXPECT_NE(cache.get_or_load("other", load), held[0]);
    EXPECT_EQ(loads.load(), 2);

    held.clear();  // held weakly: nobody uses it now, so the next get loads again
    cache.get_or_load("k", load);
    EXPECT_EQ(loads.load(), 3);
}

TEST_F(ModuleCacheTest, ForkChildStartsEmptyEvenWhileAParentLoadIsInFlight) {
    struct Value {};
    ModuleCache<Value>& cache = ModuleCache<Value>::instance();
    std::atomic<bool> loading{false}, release{false};
    std::thread parent_load([&] {
        cache.get_or_load("k", [&] {
            loading = true;
            while (!release) std::this_thread::yield();
            return std::make_shared<Value>();
        });
    });
    while (!loading) std::this_thread::yield();  // the key's slot is locked now

    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(20);  // a deadlock fails the test instead of hanging it
        bool loaded = false;
        cache.get_or_load("k", [&] {
            loaded = true;
            return std::make_shared<Value>();
        });
        ::_exit(loaded ? 0 : 1);
    }
    release = true;
    parent_load.join();
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST_F(ModuleCacheTest, PublishedFilesAppearWholeOrNotAtAll) {
    const std::string path = publish_cache_file("kept", "a.txt", "content");
    EXPECT_EQ(path, dir_ + "/kept/a.txt");
    EXPECT_EQ(read_entry(path), "content");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_ + "/kept"), {}), 1);  // no temporary left

    overwrite_entry(dir_ + "/file", "");
    set_cache_directory_for_testing(dir_ + "/file");  // cannot hold a directory
    EXPECT_EQ(publish_cache_file("kept", "a.txt", "content"), "");
}

// ---- CPU modules ----------------------------------------------------------------------------

using CpuModuleTest = RuntimeTest;

TEST_F(CpuModuleTest, CompilesAndRunsOverAnyRange) {
    auto module = load_cpu_module(kKernelSource);
    EXPECT_TRUE(module->compiled());
    EXPECT_EQ(module->hash().size(), 32u);
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(8191), int64_t(8192), int64_t(100003),
                      int64_t(1000000)})
        expect_kernel_works(*module, n);
    // Temporaries are gone; only the entry remains.
    EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
    EXPECT_TRUE(fs::exists(disk_cache_entry_path("cpu", module->hash())));
}

TEST_F(CpuModuleTest, SecondLoadHitsMemoryThenDisk) {
    auto first = load_cpu_module(kKernelSource);
    ASSERT_TRUE(first->compiled());
    auto second = load_cpu_module(kKernelSource);
    EXPECT_FALSE(second->compiled());
    EXPECT_EQ(second->symbol("sg_kernel"), first->symbol("sg_kernel"));  // the same library

    clear_cpu_module_cache();
    auto from_disk = load_cpu_module(kKernelSource);
    EXPECT_FALSE(from_disk->compiled());
    EXPECT_EQ(from_disk->hash(), first->hash());
    expect_kernel_works(*from_disk, 1000000);

    // With every handle gone the library unloads; the next load still comes from disk.
    first.reset();
    second.reset();
    from_disk.reset();
    auto again = load_cpu_module(kKernelSource);
    EXPECT_FALSE(again->compiled());
    expect_kernel_works(*again, 7);
    EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(CpuModuleTest, CorruptEntryIsRebuilt) {
    const std::string hash = load_cpu_module(kKernelSource)->hash();
    const std::string path = disk_cache_entry_path("cpu", hash);
    const std::string good = read_entry(path);
    ASSERT_GT(good.size(), 1000u);

    std::string flipped = good;
    flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 1);
    for (const std::string& damaged : {flipped, good.substr(0, good.size() / 3), std::string()}) {
        clear_cpu_module_cache();
        overwrite_entry(path, damaged);
        auto module = load_cpu_module(kKernelSource);
        EXPECT_TRUE(module->compiled());
        expect_kernel_works(*module, 1000);
        clear_cpu_module_cache();
        EXPECT_FALSE(load_cpu_module(kKernelSource)->compiled());  // the rebuilt entry is good
    }
}

TEST_F(CpuModuleTest, CompileErrorCarriesCompilerOutput) {
    try {
        load_cpu_module("#error shadegrad_expected_failure\n");
        FAIL() << "expected BackendError";
    } catch (const BackendError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("shadegrad_expected_failure"), std::string::npos) << message;
        const std::string marker = "source kept at: ";
        const size_t at = message.find(marker);
        ASSERT_NE(at, std::string::npos) << message;
        const size_t start = at + marker.size();
        const std::string kept = message.substr(start, message.find('\n', start) - start);
        EXPECT_TRUE(fs::exists(kept)) << kept;
        EXPECT_NE(read_entry(kept).find("shadegrad_expected_failure"), std::string::npos);
    }
}

TEST_F(CpuModuleTest, MissingSymbolAndMissingCompilerThrow) {
    auto module = load_cpu_module(kKernelSource);
    EXPECT_THROW(module->symbol("no_such_kernel"), BackendError);
    CpuCompileOptions options;
    options.compiler = "/nonexistent/shadegrad-test-cc";
    EXPECT_THROW(load_cpu_module(kKernelSource, options), BackendError);
}

TEST_F(CpuModuleTest, OptionsArePartOfTheKey) {
    auto plain = load_cpu_module(kKernelSource);
    CpuCompileOptions defined;
    defined.flags = {"-DSHADEGRAD_TEST=1"};
    auto with_flag = load_cpu_module(kKernelSource, defined);
    EXPECT_TRUE(with_flag->compiled());
    EXPECT_NE(with_flag->hash(), plain->hash());

    CpuCompileOptions debug;
    debug.debug = true;
    auto debug_module = load_cpu_module(kKernelSource, debug);
    EXPECT_TRUE(debug_module->compiled());
    EXPECT_NE(debug_module->hash(), plain->hash());
    expect_kernel_works(*debug_module, 100000);
    EXPECT_FALSE(fs::is_empty(dir_ + "/tmp"));  // the .so, kept for debuggers while loaded
    EXPECT_TRUE(fs::exists(dir_ + "/debug/" + debug_module->hash() + ".cpp"));  // for -g
    debug_module.reset();
    EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
    clear_cpu_module_cache();
    auto debug_again = load_cpu_module(kKernelSource, debug);  // from disk, still debuggable
    EXPECT_FALSE(debug_again->compiled());
    EXPECT_FALSE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(CpuModuleTest, ConcurrentLoadsCompileOnce) {
    const std::string source = std::string(kKernelSource) + "// concurrent\n";
    std::atomic<int> ready{0}, compiled{0};
    std::vector<std::string> hashes(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < 4) std::this_thread::yield();
            auto module = load_cpu_module(source);
            compiled += module->compiled();
            hashes[size_t(t)] = module->hash();
            expect_kernel_works(*module, 50000);
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(compiled.load(), 1);
    for (const auto& hash : hashes) EXPECT_EQ(hash, hashes[0]);
}

TEST_F(CpuModuleTest, ConcurrentProcessesBothSucceed) {
    // Two processes with empty memory caches compile the same source into the same directory.
    const std::string source = std::string(kKernelSource) + "// processes\n";
    std::vector<pid_t> children;
    for (int i = 0; i < 2; ++i) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::alarm(120);  // a hang fails the test instead of stalling it
            int status = 1;
            try {
                auto module = load_cpu_module(source);
                auto fn = reinterpret_cast<CpuKernelFn>(module->symbol("sg_kernel"));
                std::vector<int64_t> out(100000, 0);
                KernelParams params{out.data(), 2};
                cpu_launch(fn, &params, int64_t(out.size()));
                status = out[99999] == 99999 * 2 + 1 ? 0 : 2;
            } catch (...) {
                status = 3;
            }
            ::_exit(status);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    }
    auto module = load_cpu_module(source);
    EXPECT_FALSE(module->compiled());
    expect_kernel_works(*module, 10000);
}

// ---- thread pool ----------------------------------------------------------------------------

void count_visits(const void* params, int64_t begin, int64_t end) {
    auto* counts = static_cast<std::atomic<int>*>(const_cast<void*>(params));
    for (int64_t i = begin; i < end; ++i) counts[i].fetch_add(1, std::memory_order_relaxed);
}

TEST(ThreadPool, EveryIndexExactlyOnce) {
    EXPECT_EQ(cpu_thread_count(), std::atoi(std::getenv("SHADEGRAD_NUM_THREADS")));
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(8191), int64_t(8192), int64_t(8193),
                      int64_t(65537), int64_t(1000000)}) {
        std::vector<std::atomic<int>> counts(static_cast<size_t>(n));
        cpu_launch(count_visits, counts.data(), n);
        int64_t wrong = 0;
        for (const auto& count : counts) wrong += count.load() != 1;
        EXPECT_EQ(wrong, 0) << "n = " << n;
    }
}

struct NestedParams {
    std::atomic<int>* counts;
    std::atomic<int> outside_pool{0};
};
constexpr int64_t kInnerPerOuter = 2;

// Each chunk of the outer launch launches an inner kernel over its own slice of `counts`, large
// enough that it would go to the (busy) pool if it were not nested.
void nested_outer(const void* p, int64_t begin, int64_t end) {
    auto* params = static_cast<NestedParams*>(const_cast<void*>(p));
    if (!cpu_inside_pool_launch()) params->outside_pool.fetch_add(1);
    cpu_launch(count_visits, params->counts + begin * kInnerPerOuter,
               (end - begin) * kInnerPerOuter);
}

TEST(ThreadPool, NestedLaunchRunsInline) {
    const int64_t outer = 100000;
    std::vector<std::atomic<int>> counts(static_cast<size_t>(outer * kInnerPerOuter));
    NestedParams params{counts.data()};
    cpu_launch(nested_outer, &params, outer);
    if (cpu_thread_count() > 1) {  // with one thread everything runs inline
        EXPECT_EQ(params.outside_pool.load(), 0);
    }
    int64_t wrong = 0;
    for (const auto& count : counts) wrong += count.load() != 1;
    EXPECT_EQ(wrong, 0);
}

TEST(ThreadPool, ConcurrentLaunchesFromManyThreads) {
    std::vector<std::thread> threads;
    std::atomic<int64_t> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            std::vector<std::atomic<int>> counts(100000);
            for (int round = 1; round <= 30; ++round) {
                cpu_launch(count_visits, counts.data(), int64_t(counts.size()));
                for (const auto& count : counts) wrong += count.load() != round;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, ForkChildGetsAWorkingPool) {
    std::vector<std::atomic<int>> counts(100000);
    cpu_launch(count_visits, counts.data(), int64_t(counts.size()));  // the parent's pool exists
    const int parent_threads = cpu_thread_count();
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(60);
        std::vector<std::atomic<int>> child_counts(1000000);
        cpu_launch(count_visits, child_counts.data(), int64_t(child_counts.size()));
        for (const auto& count : child_counts)
            if (count.load() != 1) ::_exit(2);
        ::_exit(cpu_thread_count() == parent_threads ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace sg::runtime
