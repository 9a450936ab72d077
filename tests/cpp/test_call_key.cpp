// tests/cpp/test_call_key.cpp — the call-plan cache key: every fact that changes the kernel or the
// autograd wiring changes the key; extents 1..4 are classes of their own, others share one class.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "call/call_key.h"

namespace sg::call {
namespace {

ArgInfo tensor(std::initializer_list<int64_t> shape, DType dtype = DType::Float32, bool requires_grad = false,
               DeviceType device = DeviceType::CPU) {
    ArgInfo a;
    a.kind = ArgKind::Tensor;
    std::memset(&a.tensor, 0, sizeof(a.tensor));
    int d = 0;
    int64_t stride = 1;
    for (int64_t e : shape) a.tensor.shape[d++] = e;
    a.tensor.ndim = d;
    for (int k = d - 1; k >= 0; --k) {
        a.tensor.strides[k] = stride;
        stride *= a.tensor.shape[k];
    }
    a.tensor.dtype = dtype;
    a.tensor.device_type = device;
    a.tensor.device_index = device == DeviceType::CPU ? -1 : 0;
    a.tensor.requires_grad = requires_grad;
    return a;
}

std::string key(std::vector<ArgInfo> args, bool grad_mode = true, std::vector<std::string> kw = {}, uint32_t fn = 1) {
    CallKey k;
    build_call_key(k, fn, args.data(), args.size(), args.size(), kw, grad_mode, 0);
    return k.bytes;
}

TEST(CallKey, EachGradMaskHasItsOwnKey) {
    std::string none = key({tensor({8, 8}), tensor({8, 8})});
    std::string a = key({tensor({8, 8}, DType::Float32, true), tensor({8, 8})});
    std::string b = key({tensor({8, 8}), tensor({8, 8}, DType::Float32, true)});
    std::string both = key({tensor({8, 8}, DType::Float32, true), tensor({8, 8}, DType::Float32, true)});
    std::set<std::string> keys{none, a, b, both};
    EXPECT_EQ(keys.size(), 4u);
}

TEST(CallKey, GradModeIsPartOfTheKey) {
    auto args = std::vector<ArgInfo>{tensor({8}, DType::Float32, true)};
    EXPECT_NE(key(args, true), key(args, false));
}

TEST(CallKey, DtypeRankAndDeviceTypeChangeTheKey) {
    EXPECT_NE(key({tensor({8, 8})}), key({tensor({8, 8}, DType::Float64)}));
    EXPECT_NE(key({tensor({8, 8})}), key({tensor({8, 8}, DType::Int32)}));
    EXPECT_NE(key({tensor({8, 8})}), key({tensor({8, 8, 8})}));
    EXPECT_NE(key({tensor({8})}), key({tensor({8, 8})}));
    EXPECT_NE(key({tensor({8, 8})}), key({tensor({8, 8}, DType::Float32, false, DeviceType::CUDA)}));
}

TEST(CallKey, SmallExtentsAreTheirOwnClass) {
    std::set<std::string> keys;
    for (int64_t e : {1, 2, 3, 4}) keys.insert(key({tensor({e, 16})}));
    keys.insert(key({tensor({5, 16})}));
    EXPECT_EQ(keys.size(), 5u);
    // Extents above 4 (and 0) share one class.
    EXPECT_EQ(key({tensor({5, 16})}), key({tensor({1000, 16})}));
    EXPECT_EQ(key({tensor({5, 16})}), key({tensor({0, 16})}));
    EXPECT_EQ(extent_class(1), 1);
    EXPECT_EQ(extent_class(4), 4);
    EXPECT_EQ(extent_class(5), 0);
    EXPECT_EQ(extent_class(0), 0);
}

TEST(CallKey, SameKeyForImagesOfDifferentSizes) {
    EXPECT_EQ(key({tensor({720, 1280, 4})}), key({tensor({1080, 1920, 4})}));
    EXPECT_NE(key({tensor({720, 1280, 4})}), key({tensor({720, 1280, 3})}));
}

TEST(CallKey, ArgumentKindsGridsAndKeywordsChangeTheKey) {
    ArgInfo f;
    f.kind = ArgKind::Float;
    ArgInfo i;
    i.kind = ArgKind::Int;
    EXPECT_NE(key({f}), key({i}));
    // Python scalar values are uniforms: not part of the key.
    ArgInfo f2 = f;
    f2.number = 42.0;
    EXPECT_EQ(key({f}), key({f2}));
    ArgInfo g;
    g.kind = ArgKind::Grid;
    std::memset(&g.tensor, 0, sizeof(g.tensor));
    g.tensor.ndim = 2;
    g.tensor.shape[0] = 64;
    g.tensor.shape[1] = 64;
    ArgInfo g1 = g;
    g1.tensor.shape[0] = 1;
    EXPECT_NE(key({g}), key({g1}));
    EXPECT_NE(key({tensor({8}), tensor({8})}, true, {}), key({tensor({8}), tensor({8})}, true, {"y"}));
    EXPECT_NE(key({tensor({8})}, true, {"x"}), key({tensor({8})}, true, {"y"}));
    EXPECT_NE(key({tensor({8})}, true, {}, 1), key({tensor({8})}, true, {}, 2));
}

TEST(CallKey, StridesAndPointersAreNotPartOfTheKey) {
    ArgInfo a = tensor({8, 8});
    ArgInfo b = a;
    b.tensor.strides[0] = 1;
    b.tensor.strides[1] = 8;
    b.tensor.data = reinterpret_cast<void*>(0x1234);
    EXPECT_EQ(key({a}), key({b}));
}

TEST(CallKey, ReadableRendering) {
    ArgInfo g;
    g.kind = ArgKind::Grid;
    std::memset(&g.tensor, 0, sizeof(g.tensor));
    g.tensor.ndim = 2;
    g.tensor.shape[0] = 720;
    g.tensor.shape[1] = 3;
    ArgInfo f;
    f.kind = ArgKind::Float;
    CallKey k;
    std::vector<ArgInfo> args{g, tensor({720, 1280, 4}, DType::Float32, true), f};
    build_call_key(k, 7, args.data(), args.size(), args.size(), {"scale"}, true, 0);
    EXPECT_EQ(render_call_key(k), "fn#7 grad=1 opt=0 (grid[*,3], tensor float32 cpu [*,*,4] g1, float) scale=");
    CallKey k2;
    std::vector<ArgInfo> args2{tensor({2, 5}, DType::Float64, false, DeviceType::CUDA)};
    build_call_key(k2, 1, args2.data(), args2.size(), args2.size(), {}, false, 0);
    EXPECT_EQ(render_call_key(k2), "fn#1 grad=0 opt=0 (tensor float64 cuda:0 [2,*] g0)");
}

TEST(CallKey, HashDistinguishesKeys) {
    CallKeyHash h;
    CallKey a{key({tensor({8})})}, b{key({tensor({8, 8})})};
    EXPECT_NE(h(a), h(b));
    EXPECT_EQ(h(a), h(CallKey{key({tensor({9})})}));
}

}  // namespace
}  // namespace sg::call
