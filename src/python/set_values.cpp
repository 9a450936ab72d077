// src/python/set_values.cpp — see set_values.h.
#include "python/set_values.h"

#include <algorithm>

#include <nanobind/stl/string.h>

#include "call/errors.h"
#include "call/global_bindings.h"

namespace sg::py {

namespace {

/// Whether callable `cb` takes one positional argument (SlangPy's hook signature).
bool takes_an_argument(nb::handle cb) {
    try {
        nb::object sig = nb::module_::import_("inspect").attr("signature")(cb);
        nb::object bound = sig.attr("bind");
        try {
            bound(nb::none());
            return true;
        } catch (const nb::python_error&) {
            return false;
        }
    } catch (const nb::python_error&) {
        return false;  // no signature (a builtin): called without arguments
    }
}

}  // namespace

nb::object add_set_values(const std::string& function, nb::object previous, nb::args args, nb::kwargs kwargs,
                          nb::handle self) {
    nb::object item;
    const std::string forms = " (Set requires either keyword arguments or 1 dictionary / hook argument)";
    if (args.size() > 0 && kwargs.size() > 0)
        call::throw_type_error(function + "(): set() takes keyword arguments or one dict or callback, not both" + forms);
    if (args.size() > 1)
        call::throw_type_error(function + "(): set() takes one positional argument (a dict or a callback), got " +
                               std::to_string(args.size()) + forms);
    if (kwargs.size() > 0) {
        item = nb::dict(kwargs);
    } else if (args.size() == 1 && nb::isinstance<nb::dict>(args[0])) {
        item = nb::dict(nb::borrow<nb::dict>(args[0]));  // a copy: later changes to the caller's dict do not apply
    } else if (args.size() == 1 && PyCallable_Check(args[0].ptr())) {
        item = nb::borrow(args[0]);
        if (takes_an_argument(item)) item = nb::module_::import_("functools").attr("partial")(item, self);
    } else {
        call::throw_type_error(function + "(): set() needs a dict or a callback (or keyword arguments), got " +
                               (args.size() ? std::string(Py_TYPE(args[0].ptr())->tp_name) : std::string("nothing")) +
                               forms);
    }
    nb::list out;
    if (previous.is_valid() && !previous.is_none())
        for (nb::handle h : nb::borrow<nb::list>(previous)) out.append(h);
    out.append(item);
    return std::move(out);
}

nb::dict merge_set_values(const call::UserModule& module, const std::string& function,
                          const std::vector<std::string>& params, nb::handle values, const nb::args& args,
                          const nb::kwargs& kwargs) {
    // Every set() in order (a later one wins), callbacks called now.
    nb::dict given;
    for (nb::handle item : nb::borrow<nb::list>(values)) {
        nb::object v = PyCallable_Check(item.ptr()) ? item() : nb::borrow(item);
        if (!nb::isinstance<nb::dict>(v))
            call::throw_type_error(function + "(): set() needs a dict (or a callback returning one), got " +
                                   std::string(Py_TYPE(v.ptr())->tp_name));
        for (auto [k, x] : nb::borrow<nb::dict>(v)) {
            if (!PyUnicode_Check(k.ptr()))
                call::throw_type_error(function + "(): set() takes values by name (str keys), got a key of type " +
                                       std::string(Py_TYPE(k.ptr())->tp_name));
            given[k] = x;
        }
    }
    const std::vector<const lang::VarDecl*> globals = module.module_parameters();
    auto is_global = [&](const std::string& name) {
        for (const lang::VarDecl* g : globals)
            if (g->name == name) return true;
        return false;
    };
    nb::dict merged;
    nb::dict global_values;
    for (auto [k, v] : given) {
        std::string key = nb::cast<std::string>(k);
        if (is_global(key)) {  // SlangPy's set(): the module's globals
            global_values[nb::str((std::string(1, call::kGlobalMarker) + key).c_str())] = v;
            continue;
        }
        auto p = std::find(params.begin(), params.end(), key);
        if (p == params.end()) {
            std::string names;
            for (const lang::VarDecl* g : globals) names += (names.empty() ? "" : ", ") + g->name;
            call::throw_type_error(function + "(): set() names '" + key + "', which is neither a parameter of " +
                                   function + "() nor a global of module '" + module.name() + "' (its globals: " +
                                   (names.empty() ? "none" : names) + ")");
        }
        const bool positional = size_t(p - params.begin()) < args.size();
        if (!positional && !kwargs.contains(k)) merged[k] = v;
    }
    for (auto [k, v] : kwargs) {
        if (PyUnicode_Check(k.ptr()) && call::is_global_keyword(nb::cast<std::string>(k)))
            call::throw_type_error(function + "(): keyword argument '" + nb::cast<std::string>(k) +
                                   "' is not a parameter name (give a global's value with set())");
        merged[k] = v;
    }
    for (auto [k, v] : global_values) merged[k] = v;
    return merged;
}

}  // namespace sg::py
