// tests/support/source_generator.h — generated kernel-language modules of a requested size, for
// the front-end benchmark and the resource-limit tests.
//
// realistic_module() repeats a unit of about 100 lines in the style of the conformance kernels —
// an IDifferentiable struct with a no_diff field, [Differentiable] functions with [MaxIters]
// loops, constant-trip-count loops, branches, vector and matrix math and intrinsics, a custom
// backward derivative, a plain function that calls bwd_diff, and tensor-taking kernels — with
// per-unit names and constants, until the requested number of lines or bytes is reached. Every
// unit is valid tier-1 code, so the whole module is expected to compile.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace sg::test {

namespace detail {

inline void append_replaced(std::string& out, const char* unit, const std::string& k, const std::string& c) {
    for (const char* p = unit; *p; ++p) {
        if (*p == '$' && p[1] == 'K') out += k, ++p;       // unit number: unique names
        else if (*p == '$' && p[1] == 'C') out += c, ++p;  // a per-unit constant
        else out += *p;
    }
}

// One unit of realistic code; `$K` is the unit number and `$C` a per-unit constant.
inline constexpr const char* kRealisticUnit = R"(// ---- unit $K
struct Particle$K : IDifferentiable
{
    float3 pos;
    float3 vel;
    no_diff float mass;
};

static const float kWeights$K[4] = { 0.1f, 0.2f, 0.3f, 0.$Cf };

[Differentiable]
float energy$K(Particle$K p, float dt)
{
    float3 q = p.pos + p.vel * dt;
    return 0.5f * p.mass * dot(p.vel, p.vel) + dot(q, q);
}

[Differentiable]
float3 shade$K(float3 n, float3 l, float roughness, int steps)
{
    float3 acc = float3(0.0f);
    [MaxIters(8)]
    for (int i = 0; i < steps; i++)
    {
        float t = float(i) * 0.125f;
        float3 h = normalize(l + n * t);
        float nh = max(dot(n, h), 0.0f);
        if (nh > 0.$Cf)
            acc += pow(nh + 1.0f, roughness) * h;
        else
            acc -= 0.25f * lerp(n, h, t);
    }
    return acc * rcp(1.0f + length(acc));
}

[Differentiable]
float loss$K(float3 n, float3 l, float r, Particle$K p)
{
    float3 c = shade$K(n, l, r, 4);
    float e = energy$K(p, 0.1f);
    float s = 0.0f;
    for (int i = 0; i < 4; i++)
        s += c.x * kWeights$K[i] + c.y * float(i);
    float3x3 m = float3x3(1.0f, 0.0f, 0.$Cf, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f);
    float3 v = mul(m, c);
    return s + e * e + no_diff smoothstep(0.0f, 1.0f, r) + dot(v, v) * 0.5f;
}

[BackwardDerivative(softplus$K_bwd)]
float softplus$K(float x) { return log(1.0f + exp(x)); }

void softplus$K_bwd(inout DifferentialPair<float> x, float dOut)
{
    x = diffPair(x.p, dOut / (1.0f + exp(-x.p)));
}

[Differentiable]
float activate$K(float x, no_diff float slope)
{
    float y = softplus$K(x) * slope;
    return x > 0.0f ? y : y * 0.$Cf;
}

float3 grad_n$K(float3 n, float3 l, float r)
{
    var pn = diffPair(n);
    var pl = diffPair(l);
    var pr = diffPair(r);
    bwd_diff(shade$K)(pn, pl, pr, 4, float3(1.0f));
    return pn.d;
}

[Differentiable]
void linear$K(int r, IDiffTensor<float, 2> W, IDiffTensor<float, 1> bias, IDiffTensor<float, 1> x, IWDiffTensor<float, 1> y)
{
    float s = bias[r];
    [MaxIters(64)]
    for (uint c = 0; c < W.shape[1]; c++)
        s += W[r, c] * x[c];
    y[r] = activate$K(s, 0.$Cf);
}

[Differentiable]
void blend$K(int2 px, IDiffTensor<float3, 2> image, IDiffTensor<float, 1> params, IWDiffTensor<float3, 2> out_image)
{
    float3 a = image[px];
    float w = saturate(params[0] + 0.$Cf);
    float3 b = float3(clamp(a.x, 0.0f, 1.0f), abs(a.y), sqrt(a.z * a.z + 1.0f));
    out_image[px] = lerp(a, b, w) + float3(sin(w), cos(w), tanh(w));
}

)";

// A unit of generic code: 3 generic functions (a type parameter constrained by IFloat, a value
// parameter sizing vectors, one sizing arrays) and a caller that instantiates them 10 times in all,
// with explicit and inferred arguments. Accepted by slangc as written.
inline constexpr const char* kGenericUnit = R"(// ---- generic unit $K
[Differentiable]
T cubic_$K<T : IFloat>(T x, T a, T b) { return a * x * x * x + b * x; }

[Differentiable]
vector<float, N> blend_$K<let N : int>(vector<float, N> a, vector<float, N> b, vector<float, N> t)
{
    return a + (b - a) * t;
}

[Differentiable]
float wsum_$K<let N : int>(float[N] x, float[N] w)
{
    float s = 0.0;
    [ForceUnroll]
    for (int i = 0; i < N; i++)
        s += w[i] * x[i] * x[i];
    return s;
}

[Differentiable]
float use_generics_$K(float x, float3 v, double d)
{
    float[2] x2 = { x, 2.0 };
    float[3] x3 = { x, x, 1.0 };
    float[4] x4 = { x, 1.0, 2.0, x };
    float[5] x5 = { x, 1.0, 2.0, x, 0.5 };
    float[2] w2 = { 0.5, 0.25 };
    float[3] w3 = { 1.0, 2.0, 3.0 };
    float[4] w4 = { 1.0, 0.5, 0.25, 0.125 };
    float[5] w5 = { 1.0, 0.5, 0.25, 0.125, 0.0625 };
    float r = cubic_$K(x, 0.5, 2.0) + float(cubic_$K<double>(d, 0.5, 1.0)) + float(cubic_$K(half(x), half(1.0), half(0.5)));
    r += dot(blend_$K(v, v * 2.0, float3(0.5)), v) + blend_$K(v.xy, float2(1.0), float2(x)).x;
    r += blend_$K(float4(v, 1.0), float4(x), float4(0.25)).w + blend_$K<1>(vector<float, 1>(x), vector<float, 1>(1.0), vector<float, 1>(0.5)).x;
    r += wsum_$K(x2, w2) + wsum_$K(x3, w3) + wsum_$K<4>(x4, w4) + wsum_$K(x5, w5);
    return r;
}
)";

}  // namespace detail

/// A valid module of at least `min_lines` lines and `min_bytes` bytes (`import slangpy;` and
/// repeated units, see the file comment).
inline std::string realistic_module(size_t min_lines, size_t min_bytes = 0) {
    std::string out = "// generated by tests/support/source_generator.h\nimport slangpy;\n\n";
    size_t lines = 3;
    for (size_t k = 0; lines < min_lines || out.size() < min_bytes; ++k) {
        size_t before = out.size();
        detail::append_replaced(out, detail::kRealisticUnit, std::to_string(k), std::to_string(1 + k % 9));
        for (size_t i = before; i < out.size(); ++i) lines += out[i] == '\n';
    }
    return out;
}

/// A module of at least `min_lines` lines that opens with `generic_units` generic units (3 generic
/// functions and 10 instantiations each), followed by realistic units.
inline std::string generic_module(size_t min_lines, size_t generic_units = 10) {
    std::string out = "// generated by tests/support/source_generator.h\nimport slangpy;\n\n";
    for (size_t k = 0; k < generic_units; ++k)
        detail::append_replaced(out, detail::kGenericUnit, std::to_string(k), std::to_string(1 + k % 9));
    size_t lines = size_t(std::count(out.begin(), out.end(), '\n'));
    for (size_t k = 0; lines < min_lines; ++k) {
        size_t before = out.size();
        detail::append_replaced(out, detail::kRealisticUnit, std::to_string(k), std::to_string(1 + k % 9));
        for (size_t i = before; i < out.size(); ++i) lines += out[i] == '\n';
    }
    return out;
}

}  // namespace sg::test
