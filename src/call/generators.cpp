// src/call/generators.cpp — call_id, thread_id, wang_hash and rand_float (generators.h).
#include "call/generators.h"

#include "call/glue.h"

namespace sg::call {

using lang::ScalarKind;
using lang::Type;

namespace {

/// int or uint scalars, vectors or arrays: one component per index.
bool binds_to_index(const Type* t) {
    auto ok = [](ScalarKind k) { return k == ScalarKind::Int32 || k == ScalarKind::UInt32; };
    if (t->is_scalar() || t->is_vector()) return ok(t->scalar);
    return t->is_array() && t->count > 0 && t->element->is_scalar() && ok(t->element->scalar);
}

/// A scalar or vector of `k`, or an array of scalars of `k`.
bool scalar_vector_or_array_of(const Type* t, ScalarKind k) {
    const Type* s = t->is_array() ? t->element : t;
    return (s->is_scalar() || s->is_vector()) && s->scalar == k && (!t->is_array() || s->is_scalar());
}

std::vector<std::string> call_id_components(GeneratorGlue& g, const ParamBinding& p, int n) {
    // Component k of a vector is call dimension rank-1-k (x fastest); of an array, dimension k.
    const int rank = g.call_rank();
    std::vector<std::string> parts;
    for (int k = 0; k < n; ++k) {
        int d = p.type->is_vector() ? rank - 1 - k : rank - n + k;
        parts.push_back(d >= 0 && d < rank ? g.call_index(d) : "0");
    }
    return parts;
}

std::vector<std::string> thread_id_components(GeneratorGlue& g, const ParamBinding&, int n) {
    std::vector<std::string> parts{g.linear_index()};
    for (int k = 1; k < n; ++k) parts.push_back("0");
    return parts;
}

/// Wang's 32-bit integer hash, its warm-up rounds, and a float in [0, 1) from a hash's low 23 bits
/// (SlangPy's generators: the same numbers for the same seed).
constexpr const char* kHashHelpers = R"(uint __sg_wang_hash(uint seed)
{
    seed = (seed ^ 61u) ^ (seed >> 16u);
    seed = seed * 9u;
    seed = seed ^ (seed >> 4u);
    seed = seed * 668265261u;
    seed = seed ^ (seed >> 15u);
    return seed;
}
uint __sg_wang_warmup(uint h, uint rounds)
{
    for (uint i = 0u; i < rounds; i++) h = __sg_wang_hash(h);
    return h;
}
float __sg_unit_float(uint h) { return float(h & 8388607u) * (1.0f / 8388608.0f); }
)";

/// SlangPy's per-thread hashes: start from the thread's linear index (times the number of
/// components of a vector, so that neighbouring threads do not share hashes), hash it `warmup`
/// times, xor the seed in, then hash once per component, each hash from the previous one. The
/// seed arrives already hashed when the call asked for it (hash_seed=True, done on the host).
std::vector<std::string> wang_hash_components(GeneratorGlue& g, const ParamBinding& p, int n) {
    g.helpers(kHashHelpers);
    const std::string seed = g.uniform("_p_" + p.ident + "_seed", g.uint_type(), kUniformSeed);
    const std::string warmup = g.uniform("_p_" + p.ident + "_warmup", g.uint_type(), kUniformWarmup);
    const std::string start = "uint(" + g.linear_index() + ")" + (p.type->is_scalar() ? "" : " * " + std::to_string(n) + "u");
    std::string prev = "_h_" + p.ident;
    g.statement("    uint " + prev + " = __sg_wang_warmup(" + start + ", " + warmup + ") ^ " + seed + ";\n");
    std::vector<std::string> hashes;
    for (int k = 0; k < n; ++k) {
        std::string hk = "_h_" + p.ident + "_" + std::to_string(k);
        g.statement("    uint " + hk + " = __sg_wang_hash(" + prev + ");\n");
        hashes.push_back(hk);
        prev = hk;
    }
    return hashes;
}

/// wang_hash into an int parameter: the hash's bits as an int.
std::vector<std::string> wang_hash_typed(GeneratorGlue& g, const ParamBinding& p, int n) {
    std::vector<std::string> parts = wang_hash_components(g, p, n);
    const Type* s = p.type->is_array() ? p.type->element : p.type;
    if (s->scalar == ScalarKind::Int32)
        for (std::string& hk : parts) hk = "int(" + hk + ")";
    return parts;
}

std::vector<std::string> rand_float_components(GeneratorGlue& g, const ParamBinding& p, int n) {
    std::vector<std::string> parts = wang_hash_components(g, p, n);
    const std::string lo = g.uniform("_p_" + p.ident + "_min", g.float_type(), kUniformValue);
    const std::string hi = g.uniform("_p_" + p.ident + "_max", g.float_type(), kUniformMax);
    for (std::string& hk : parts) hk = lo + " + (" + hi + " - " + lo + ") * __sg_unit_float(" + hk + ")";
    return parts;
}

bool binds_to_int_or_uint(const Type* t) {
    return scalar_vector_or_array_of(t, ScalarKind::UInt32) || scalar_vector_or_array_of(t, ScalarKind::Int32);
}

}  // namespace

const Generator kCallIdGenerator{binds_to_index, "int, intN or int[N]", false, call_id_components};
const Generator kThreadIdGenerator{binds_to_index, "int, intN or int[N]", true, thread_id_components};
const Generator kWangHashGenerator{binds_to_int_or_uint, "uint, uintN, uint[N], int, intN or int[N]", true,
                                   wang_hash_typed};
const Generator kRandFloatGenerator{[](const Type* t) { return scalar_vector_or_array_of(t, ScalarKind::Float); },
                                    "float, floatN or float[N]", true, rand_float_components};

}  // namespace sg::call
