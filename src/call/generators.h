// src/call/generators.h — generators: arguments whose value each call element computes from
// its position (sg.call_id(), sg.thread_id(), sg.wang_hash(), sg.rand_float()).
//
// A generator is a value kind (value_kind.h) whose row also names a Generator: which parameter
// types it binds to, whether it reads the call's extents, and the code of each scalar component
// of its value, written through the glue writer's services (GeneratorGlue). Its numbers (a seed,
// a range) travel as uniforms: components of glue.h's UniformComponent read from its ArgInfo.
// A new generator is its ArgKind, its Generator here and its value-kind row naming it.
#pragma once

#include <string>
#include <vector>

#include "call/binder.h"

namespace sg::call {

/// What the glue offers a generator's code (implemented by the glue writer, glue.cpp).
class GeneratorGlue {
public:
    virtual ~GeneratorGlue() = default;
    /// A kernel parameter named `name` of `type` holding uniform `component` of the leaf.
    virtual std::string uniform(const std::string& name, const lang::Type* type, int component) = 0;
    /// The index of call dimension `d` (0: the outermost).
    virtual std::string call_index(int d) = 0;
    /// The element's linear index, row-major over the call shape.
    virtual std::string linear_index() = 0;
    /// Adds `text` (one statement and its newline) before the call.
    virtual void statement(const std::string& text) = 0;
    /// Puts `helpers` (function definitions) before the kernel, once however often asked.
    virtual void helpers(const char* text) = 0;
    virtual const lang::Type* uint_type() const = 0;
    virtual const lang::Type* float_type() const = 0;
    virtual int call_rank() const = 0;
};

struct Generator {
    /// Whether the generator's value can be a `type` parameter.
    bool (*binds_to)(const lang::Type* type);
    /// What it binds to, for the message when it does not: "uint, uintN or uint[N]".
    const char* binds_to_text;
    /// Whether its code reads the call's extents (the linear index does).
    bool reads_call_extents;
    /// The code of each of the `n` scalar components of leaf `p`'s value (`p.ident` names it).
    std::vector<std::string> (*components)(GeneratorGlue& g, const ParamBinding& p, int n);
};

extern const Generator kCallIdGenerator;
extern const Generator kThreadIdGenerator;
extern const Generator kWangHashGenerator;
extern const Generator kRandFloatGenerator;

}  // namespace sg::call
