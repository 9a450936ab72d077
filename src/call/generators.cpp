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

/// Wang's 32-bit integer hash, and a float in [0, 1) from a hash's top 24 bits.
constexpr const char* kHashHelpers = R"(uint __sg_wang_hash(uint seed)
{
    seed = (seed ^ 61u) ^ (seed >> 16u);
    seed = seed * 9u;
    seed = seed ^ (seed >> 4u);
    seed = seed * 668265261u;
    seed = seed ^ (seed >> 15u);
    return seed;
}
float __sg_unit_float(uint h) { return float(h >> 8u) * (1.0f / 16777216.0f); }
)";

/// One hash per component: the first of the element's linear index and the seed, each next one
/// of the previous hash and the component's number.
std::vector<std::string> wang_hash_components(GeneratorGlue& g, const ParamBinding& p, int n) {
    g.helpers(kHashHelpers);
    const std::string seed = g.uniform("_p_" + p.ident + "_seed", g.uint_type(), kUniformSeed);
    std::vector<std::string> hashes;
    for (int k = 0; k < n; ++k) {
        std::string hk = "_h_" + p.ident + "_" + std::to_string(k);
        std::string value = k == 0 ? "__sg_wang_hash(__sg_wang_hash(uint(" + g.linear_index() + ")) ^ " + seed + ")"
                                   : "__sg_wang_hash(" + hashes.back() + " + " + std::to_string(k) + "u)";
        g.statement("    uint " + hk + " = " + value + ";\n");
        hashes.push_back(hk);
    }
    return hashes;
}

std::vector<std::string> rand_float_components(GeneratorGlue& g, const ParamBinding& p, int n) {
    std::vector<std::string> parts = wang_hash_components(g, p, n);
    const std::string lo = g.uniform("_p_" + p.ident + "_min", g.float_type(), kUniformValue);
    const std::string hi = g.uniform("_p_" + p.ident + "_max", g.float_type(), kUniformMax);
    for (std::string& hk : parts) hk = lo + " + (" + hi + " - " + lo + ") * __sg_unit_float(" + hk + ")";
    return parts;
}

}  // namespace

const Generator kCallIdGenerator{binds_to_index, "int, intN or int[N]", false, call_id_components};
const Generator kThreadIdGenerator{binds_to_index, "int, intN or int[N]", true, thread_id_components};
const Generator kWangHashGenerator{[](const Type* t) { return scalar_vector_or_array_of(t, ScalarKind::UInt32); },
                                   "uint, uintN or uint[N]", true, wang_hash_components};
const Generator kRandFloatGenerator{[](const Type* t) { return scalar_vector_or_array_of(t, ScalarKind::Float); },
                                    "float, floatN or float[N]", true, rand_float_components};

}  // namespace sg::call
