// src/runtime/thread_pool.cpp — the process-wide worker pool and cpu_launch (see thread_pool.h).
//
// The job of a launch lives in the pool object (one launch at a time, under launch_mutex), so a
// launch allocates nothing. Chunks are claimed with a compare-exchange on one 64-bit word that
// holds both the chunk count and the next chunk index: a worker that claims a chunk has, in the
// same atomic step, proven that the job it read belongs to is still unfinished — so the launching
// thread cannot return and overwrite the job while that worker reads it, and a worker that wakes
// late for an old launch simply finds nothing to claim.
#include "runtime/thread_pool.h"

#include "runtime/cpu_module.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <thread>

namespace sg::runtime {
namespace {

constexpr int kMaxThreads = 1024;
// Busy-wait iterations before sleeping on a futex (~tens of µs): back-to-back launches (forward
// then backward, or a loop of small kernels) find workers awake, while idle workers stop
// consuming CPU soon after.
constexpr int kSpinIterations = 1024;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Set on pool workers for their whole life and on a launching thread while it runs its share:
// a launch from such a thread runs inline instead of waiting for a pool that is busy with it.
thread_local bool t_inside_launch = false;

struct Pool {
    // The current job: written by the launching thread before `claim` publishes it, read by
    // other threads only after they have claimed one of its chunks (see run_chunks).
    CpuKernelFn fn = nullptr;
    const void* params = nullptr;
    int64_t n = 0;
    int64_t chunk_size = 1;
    int thread_count = 1;  // workers + the launching thread

    // Separate cache lines: claims, completions and wake-ups are written by different threads.
    alignas(64) std::atomic<uint64_t> claim{0};     // [chunk count : 32][next chunk : 32]
    alignas(64) std::atomic<uint32_t> finished{0};  // chunks completed in this launch
    alignas(64) std::atomic<uint32_t> epoch{0};     // bumped once per launch; workers sleep on it
    alignas(64) std::mutex launch_mutex;            // one launch at a time
};

// Never deleted (see thread_pool.h); replaced, with the old one leaked, in a fork() child.
std::atomic<Pool*> g_pool{nullptr};
std::mutex g_create_mutex;

// Runs chunks of the current job until none are left unclaimed.
void run_chunks(Pool& pool) noexcept {
    uint64_t claim = pool.claim.load(std::memory_order_relaxed);
    for (;;) {
        const uint32_t count = static_cast<uint32_t>(claim >> 32);
        const uint32_t next = static_cast<uint32_t>(claim);
        if (next >= count) return;
        // Acquire: pairs with the launching thread's release store of `claim`, making the job
        // fields it wrote before that store visible here.
        if (!pool.claim.compare_exchange_weak(claim, claim + 1, std::memory_order_acquire,
                                              std::memory_order_relaxed))
            continue;
        const int64_t begin = static_cast<int64_t>(next) * pool.chunk_size;
        const int64_t end = std::min(pool.n, begin + pool.chunk_size);
        pool.fn(pool.params, begin, end);
        // Release: the kernel's writes become visible to the launcher's acquire of `finished`.
        // After this increment the job may be replaced, so nothing of it is read again.
        if (pool.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == count)
            pool.finished.notify_all();
        claim = pool.claim.load(std::memory_order_relaxed);
    }
}

void* worker_main(void* argument) noexcept {
    Pool& pool = *static_cast<Pool*>(argument);
    t_inside_launch = true;
    // `seen` is read before looking for work, so a launch published after this point bumps
    // the epoch past it and the wait below cannot miss it.
    uint32_t seen = pool.epoch.load(std::memory_order_acquire);
    for (;;) {
        run_chunks(pool);
        uint32_t now = pool.epoch.load(std::memory_order_acquire);
        for (int i = 0; now == seen && i < kSpinIterations; ++i) {
            cpu_relax();
            now = pool.epoch.load(std::memory_order_acquire);
        }
        while (now == seen) {
            pool.epoch.wait(seen, std::memory_order_acquire);
            now = pool.epoch.load(std::memory_order_acquire);
        }
        seen = now;
    }
    return nullptr;
}

int configured_thread_count() noexcept {
    if (const char* text = std::getenv("SHADEGRAD_NUM_THREADS"); text && *text) {
        char* end = nullptr;
        const long value = std::strtol(text, &end, 10);
        if (*end == '\0' && value > 0) return static_cast<int>(std::min<long>(value, kMaxThreads));
    }
    // The CPUs this process may run on (taskset, cgroup cpusets), not all the machine has.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return std::min(CPU_COUNT(&set), kMaxThreads);
    const unsigned hardware = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(hardware, 1u, unsigned(kMaxThreads)));
}

void register_fork_handlers() noexcept {
    // A fork() child has only the forking thread: the parent's workers do not exist there, and
    // the pool's mutexes may be held by threads that vanished. The child forgets the pool
    // (leaking it) and creates its own on first use.
    ::pthread_atfork([] { g_create_mutex.lock(); }, [] { g_create_mutex.unlock(); },
                     [] {
                         g_create_mutex.unlock();
                         g_pool.store(nullptr, std::memory_order_release);
                     });
}

// Out of line and cold: runs once per process (per fork child). Returns nullptr only when not
// even the pool object can be allocated; then launches run inline.
[[gnu::noinline, gnu::cold]] Pool* create_pool() noexcept {
    static std::once_flag once;
    std::call_once(once, register_fork_handlers);
    std::lock_guard<std::mutex> lock(g_create_mutex);
    if (Pool* existing = g_pool.load(std::memory_order_acquire)) return existing;

    Pool* pool = new (std::nothrow) Pool;
    if (!pool) return nullptr;
    const int wanted = configured_thread_count();

    // Workers start with asynchronous signals blocked, so those (SIGINT that Python turns into
    // KeyboardInterrupt, SIGCHLD, ...) are delivered to the application's threads. Signals a
    // faulting kernel raises itself stay unblocked: blocked, they would kill the process
    // without running the application's handlers (faulthandler, crash reporters).
    sigset_t blocked, previous;
    ::sigfillset(&blocked);
    for (int synchronous : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT})
        ::sigdelset(&blocked, synchronous);
    ::pthread_sigmask(SIG_SETMASK, &blocked, &previous);
    pthread_attr_t attributes;
    ::pthread_attr_init(&attributes);
    ::pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);  // never joined
    int started = 0;
    for (int i = 1; i < wanted; ++i) {
        pthread_t thread;
        if (::pthread_create(&thread, &attributes, worker_main, pool) != 0) break;  // use fewer
        ::pthread_setname_np(thread, "sg-cpu-worker");
        ++started;
    }
    ::pthread_attr_destroy(&attributes);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);

    pool->thread_count = started + 1;
    g_pool.store(pool, std::memory_order_release);
    return pool;
}

inline Pool* get_pool() noexcept {
    Pool* pool = g_pool.load(std::memory_order_acquire);
    return pool ? pool : create_pool();
}

int64_t pool_chunk_size(const Pool& pool, int64_t n, int64_t min_chunk = kCpuMinChunkItems) noexcept {
    const int64_t max_chunks = int64_t(pool.thread_count) * kCpuChunksPerThread;
    const int64_t wanted_chunks = std::max<int64_t>(1, std::min(n / min_chunk, max_chunks));
    return (n + wanted_chunks - 1) / wanted_chunks;
}

[[gnu::noinline]] void launch_on_pool(Pool& pool, CpuKernelFn fn, const void* params, int64_t n,
                                      int64_t min_chunk = kCpuMinChunkItems) noexcept {
    std::lock_guard<std::mutex> lock(pool.launch_mutex);
    const int64_t chunk_size = pool_chunk_size(pool, n, min_chunk);
    const uint32_t count = static_cast<uint32_t>((n + chunk_size - 1) / chunk_size);  // none empty

    pool.fn = fn;
    pool.params = params;
    pool.n = n;
    pool.chunk_size = chunk_size;
    pool.finished.store(0, std::memory_order_relaxed);
    pool.claim.store(uint64_t(count) << 32, std::memory_order_release);  // publishes the job
    pool.epoch.fetch_add(1, std::memory_order_release);
    pool.epoch.notify_all();  // a no-op syscall-wise when every worker is still spinning

    t_inside_launch = true;
    run_chunks(pool);
    t_inside_launch = false;

    // Stragglers are finishing their last chunk: spin briefly, then sleep until the last one
    // notifies.
    uint32_t done = pool.finished.load(std::memory_order_acquire);
    for (int i = 0; done != count && i < kSpinIterations; ++i) {
        cpu_relax();
        done = pool.finished.load(std::memory_order_acquire);
    }
    while (done != count) {
        pool.finished.wait(done, std::memory_order_acquire);
        done = pool.finished.load(std::memory_order_acquire);
    }
}

}  // namespace

void cpu_launch(CpuKernelFn fn, const void* params, int64_t n) noexcept {
    cpu_launch_items(fn, params, n, kCpuMinChunkItems);
}

void cpu_launch_items(CpuKernelFn fn, const void* params, int64_t n, int64_t min_chunk) noexcept {
    if (n <= 0) [[unlikely]]
        return;
    if (min_chunk < 1) min_chunk = 1;
    // Small launches and nested ones: a plain call, no atomics, no locks.
    if (n < 2 * min_chunk || t_inside_launch) {
        fn(params, 0, n);
        return;
    }
    Pool* pool = get_pool();
    if (!pool || pool->thread_count == 1) [[unlikely]] {
        fn(params, 0, n);
        return;
    }
    launch_on_pool(*pool, fn, params, n, min_chunk);
}

int64_t cpu_chunk_size(int64_t n) noexcept {
    if (n < 2 * kCpuMinChunkItems || t_inside_launch) return n;
    const Pool* pool = get_pool();
    if (!pool || pool->thread_count == 1) return n;
    return pool_chunk_size(*pool, n);
}

int cpu_thread_count() noexcept {
    const Pool* pool = get_pool();
    return pool ? pool->thread_count : 1;
}

bool cpu_inside_pool_launch() noexcept { return t_inside_launch; }

}  // namespace sg::runtime
