// src/python/module.cpp — the nanobind module shadegrad._core: classes, functions and the one
// place where C++ exceptions become Python exceptions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdio>

#include "call/call_key.h"
#include "call/errors.h"
#include "call/kernel_faults.h"
#include "syntax/diagnostics.h"
#include "python/compile_stats.h"
#include "python/compile_support.h"
#include "python/device_check.h"
#include "python/docstrings.h"
#include "python/function.h"
#include "python/module_files.h"
#include "python/torch_ops.h"
#include "runtime/cpu_module.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_nvrtc.h"

namespace nb = nanobind;
using namespace sg;
using namespace sg::py;

namespace {

constexpr const char* kCompileErrorDoc =
    "A kernel source (or the code generated for a call) did not compile.\n"
    "\n"
    "str(error) is the rendered report: for each diagnostic `file:line:col: error: message`,\n"
    "the source line and a caret.\n"
    "\n"
    "error.diagnostics is a list of Diagnostic named tuples, in the order reported:\n"
    "(file, line, col, code, severity, message)\n"
    "  file      the source's name (\"m.slang\"; \"<glue>\" for code generated for a call)\n"
    "  line      1-based line\n"
    "  col       1-based column, counted in bytes from the start of the line\n"
    "  code      Slang's diagnostic number (30510, 41022, ...), or 0\n"
    "  severity  \"error\", \"warning\" or \"note\"\n"
    "  message   the message, without location\n"
    "file, line and col are None for a diagnostic without a location.";

// Created once by the module init and kept for the life of the process (no destructor runs
// after the interpreter is gone).
PyObject* compile_error_type = nullptr;
PyObject* diagnostic_type = nullptr;

/// Kernel text may hold any bytes; a str is made with U+FFFD for the ones that are not UTF-8.
nb::object utf8_str(const std::string& s) {
    PyObject* str = PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace");
    if (!str) throw nb::python_error();
    return nb::steal(str);
}

/// Raises shadegrad.CompileError for `e`: its text and its `diagnostics`, built from the
/// error's self-contained diagnostics (the sources they came from are gone by now).
NB_NOINLINE void raise_compile_error(const lang::CompileError& e) {
    try {
        nb::list diagnostics;
        for (const lang::Diagnostic& d : e.diagnostics) {
            const lang::ResolvedLocation& at = d.location;
            nb::object file = nb::none(), line = nb::none(), col = nb::none();
            if (at.valid()) file = utf8_str(at.file), line = nb::int_(at.line), col = nb::int_(at.col);
            diagnostics.append(nb::handle(diagnostic_type)(file, line, col, d.code, lang::severity_name(d.severity),
                                                           utf8_str(d.message)));
        }
        nb::object error = nb::handle(compile_error_type)(utf8_str(e.what()));
        error.attr("diagnostics") = diagnostics;
        PyErr_SetObject(compile_error_type, error.ptr());
    } catch (const nb::python_error&) {
        // Building the exception failed (out of memory): the text alone still says what is wrong.
        PyErr_SetString(compile_error_type, e.what());
    }
}

/// A loaded module as a Python object (owning `module`) with each of its functions already in
/// the instance dict: `m.fn` is a plain attribute then, which torch.compile's tracer can read (it
/// cannot run the C++ __getattr__). A function named like a Module member stays reachable
/// through __getattr__'s error path only, as before.
nb::object with_functions(Module* module) {
    nb::object self = nb::cast(module, nb::rv_policy::take_ownership);
    // slangc's warnings (implicit conversions that lose information, ...) reach the user as a
    // shadegrad.CompileWarning, as they would on slangc's output.
    if (std::string warnings = module->load_warnings(); !warnings.empty()) {
        nb::object category = nb::module_::import_("shadegrad._warnings").attr("CompileWarning");
        std::string text = "module '" + module->name() + "' compiled with warnings:\n" + warnings;
        while (!text.empty() && text.back() == '\n') text.pop_back();
        if (PyErr_WarnEx(category.ptr(), text.c_str(), 1) != 0) throw nb::python_error();
    }
    nb::handle type = nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(self.ptr())));
    for (const std::string& name : module->function_names())
        if (!nb::hasattr(type, name.c_str())) nb::setattr(self, name.c_str(), module->function(name));
    return self;
}

/// repr(module): "<shadegrad Module 'name' on cpu: functions f, g; structs S>" (at most eight
/// names of each kind, then a count).
std::string module_repr(const Module& m) {
    auto names = [](const char* what, const std::vector<std::string>& v) {
        std::string s = std::string(what) + " ";
        if (v.empty()) return s + "none";
        for (size_t k = 0; k < v.size() && k < 8; ++k) s += (k ? ", " : "") + v[k];
        if (v.size() > 8) s += ", ... (" + std::to_string(v.size()) + " in all)";
        return s;
    };
    const Device& d = m.device();
    std::string where = d.type == DeviceType::CUDA ? "cuda:" + std::to_string(d.index) : "cpu";
    return "<shadegrad Module '" + m.name() + "' on " + where + ": " + names("functions", m.function_names()) + "; " +
           names("structs", m.struct_names()) + ">";
}

/// A struct of module `self` as a Python object that knows its module (for m.Struct.method).
nb::object struct_of(nb::handle self, std::shared_ptr<StructInfo> s) {
    s->module = nb::borrow(self);
    return nb::cast(std::move(s));
}

}  // namespace

NB_MODULE(_core, m) {
    m.doc() = "shadegrad core: compiler, runtime and call dispatch";
    // Autograd nodes alive at interpreter exit legitimately hold handles; not leaks of ours.
    nb::set_leak_warnings(false);

    nb::object diagnostic =
        nb::module_::import_("collections")
            .attr("namedtuple")("Diagnostic", nb::make_tuple("file", "line", "col", "code", "severity", "message"));
    diagnostic.attr("__module__") = "shadegrad._core";
    diagnostic.attr("__doc__") = "One diagnostic of a CompileError: see CompileError.";
    m.attr("Diagnostic") = diagnostic;
    diagnostic_type = diagnostic.release().ptr();
    compile_error_type =
        PyErr_NewExceptionWithDoc("shadegrad._core.CompileError", kCompileErrorDoc, PyExc_Exception, nullptr);
    if (!compile_error_type) throw nb::python_error();
    m.attr("CompileError") = nb::handle(compile_error_type);

    // The one place where C++ exceptions become Python exceptions.
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const lang::CompileError& e) {
            raise_compile_error(e);
        } catch (const call::CallError& e) {
            PyObject* type = e.kind == call::ErrorKind::Type    ? PyExc_TypeError
                             : e.kind == call::ErrorKind::Value ? PyExc_ValueError
                                                                : PyExc_RuntimeError;
            PyErr_SetString(type, e.what());
        } catch (const lang::InternalError& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        } catch (const runtime::BackendError& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        }
    });

    nb::enum_<DeviceType>(m, "DeviceType", doc::kDeviceType)
        .value("cpu", DeviceType::CPU, "The CPU: generated C++ compiled by the host compiler.")
        .value("cuda", DeviceType::CUDA, "An NVIDIA GPU: generated CUDA compiled by NVRTC.")
        .value("automatic", kAutomaticDevice, "CUDA when a usable GPU is there, else the CPU (chosen by create_device).");

    nb::class_<Device>(m, "Device", doc::kDevice)
        .def(nb::init<>())
        .def_prop_ro("type", [](const Device& d) { return d.type; }, "The DeviceType.")
        .def_prop_ro("index", [](const Device& d) { return d.index; }, "The CUDA device index (-1 for the CPU).")
        .def_prop_ro("include_paths", [](const Device& d) { return d.include_paths; },
                     "Folders searched for imports and includes (after the importing file's folder).")
        .def("__repr__", [](const Device& d) {
            std::string s = d.type == DeviceType::CUDA ? "Device(type=cuda, index=" + std::to_string(d.index)
                                                       : std::string("Device(type=cpu");
            if (!d.include_paths.empty()) {
                s += ", include_paths=[";
                for (size_t k = 0; k < d.include_paths.size(); ++k)
                    s += (k ? ", '" : "'") + d.include_paths[k] + "'";
                s += "]";
            }
            return s + ")";
        });

    m.def(
        "create_device",
        [](DeviceType type, int index, std::vector<std::string> include_paths, const std::string& caller,
           bool check) {
            if (type == kAutomaticDevice) type = automatic_device_type(index);
            if (type == DeviceType::CUDA && check) {
                const std::string problems = cuda_device_problems(caller, index);
                if (!problems.empty()) throw std::runtime_error(problems);
            }
            Device d;
            d.type = type;
            d.index = type == DeviceType::CPU ? -1 : index;
            d.include_paths = std::move(include_paths);
            return d;
        },
        nb::arg("type") = DeviceType::CPU, nb::arg("index") = 0, nb::arg("include_paths") = std::vector<std::string>(),
        nb::arg("caller") = "create_device", nb::arg("check") = true, doc::kCreateDevice);

    // dynamic_attr: sg.grid keeps the extents as a Python tuple in the instance dict too, where
    // torch.compile's tracer can read them (python/shadegrad/_compile.py).
    nb::class_<GridArg>(m, "GridArg", nb::dynamic_attr(), doc::kGridArg)
        .def(nb::init<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>(), nb::arg("shape"),
             nb::arg("stride") = std::vector<int64_t>{}, nb::arg("offset") = std::vector<int64_t>{})
        .def_ro("shape", &GridArg::shape)
        .def_ro("stride", &GridArg::stride)
        .def_ro("offset", &GridArg::offset)
        .def("__repr__", [](const GridArg& g) {
            auto tuple = [](const std::vector<int64_t>& v) {
                std::string s = "(";
                for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
                return s + (v.size() == 1 ? ",)" : ")");
            };
            std::string s = "grid(" + tuple(g.shape);
            if (!g.stride.empty()) s += ", stride=" + tuple(g.stride);
            if (!g.offset.empty()) s += ", offset=" + tuple(g.offset);
            return s + ")";
        });

    // __call__ is the tp_call slot (Function::call, as _call), not a method: torch.compile support
    // puts a traceable stand-in in the class dict that calls never use (compile_support.h).
    auto function_class =
        nb::class_<Function>(m, "Function", nb::type_slots(function_type_slots()), doc::kFunction);
    function_class.def("_call", &Function::call)
        .def("call", &Function::call, nb::sig(doc::kCallSig), doc::kCall)
        .def("_backward", &Function::backward, nb::arg("args"), nb::arg("kwargs"), nb::arg("result_grads"),
             nb::arg("written_grads"))
        .def("debug_code", &Function::debug_code, nb::sig(doc::kDebugCodeSig), doc::kDebugCode)
        .def("_launch", &Function::launch, nb::arg("args"), nb::arg("kwargs"), nb::arg("block"), nb::arg("grid"),
             nb::arg("thread_count") = nb::none(), nb::arg("pass_") = 0)
        .def("_coop_params", &Function::coop_params)
        .def_prop_ro("cooperative", &Function::cooperative, "Whether it is a [CUDAKernel] function (launched, not called per element).")
        .def_prop_ro("_view_function", &Function::view_function, "Whether it takes views without being a [CUDAKernel] function (called as one launch).")
        .def("call_key", &Function::call_key, nb::sig(doc::kKeyOfCallSig), doc::kKeyOfCall)
        .def("map", &Function::map, nb::rv_policy::take_ownership, nb::sig(doc::kMapSig), doc::kMap)
        .def("set", &Function::set, nb::rv_policy::take_ownership, nb::sig(doc::kSetSig), doc::kSet)
        .def("bind", &Function::bind, nb::arg("this"), nb::rv_policy::take_ownership, nb::sig(doc::kBindSig),
             doc::kBind)
        .def("return_type", &Function::return_type, nb::arg("type"), nb::rv_policy::take_ownership,
             nb::sig(doc::kReturnTypeSig), doc::kReturnType)
        .def("constants", &Function::constants, nb::arg("values"), nb::rv_policy::take_ownership,
             nb::sig(doc::kConstantsSig), doc::kConstants)
        .def("deterministic", &Function::deterministic, nb::arg("enabled") = true, nb::rv_policy::take_ownership,
             nb::sig(doc::kDeterministicSig), doc::kDeterministic)
        .def("fast_math", &Function::fast_math, nb::arg("enabled") = true, nb::rv_policy::take_ownership,
             nb::sig(doc::kFastMathSig), doc::kFastMath)
        .def("call_group_shape", &Function::call_group_shape, nb::arg("shape").none(), nb::rv_policy::take_ownership,
             nb::sig(doc::kCallGroupShapeSig), doc::kCallGroupShape)
        .def_prop_ro("plan_count", &Function::plan_count, "Cached call plans (shared with the modifiers' functions).")
        .def_prop_ro("name", &Function::name, "The function's name (\"f\", \"S.method\", \"f<3>\").")
        .def_prop_ro("parameter_names", &Function::parameter_names, "The parameters' names, in order.")
        .def_prop_ro("parameters", &Function::parameters,
                     "(name, \"in\" | \"out\" | \"inout\", type name) per parameter, in order.")
        .def_prop_ro("parameter_defaults", &Function::parameter_defaults,
                     "{name: default value's source text} for the parameters that have one.")
        .def_prop_ro("returns_value", &Function::returns_value, "False for a void function.")
        .def_prop_ro("device", [](const Function& f) { return f.device(); }, "The module's Device.")
        .def_prop_ro("device_type", [](const Function& f) { return int(f.device().type); })
        .def_prop_ro("device_index", [](const Function& f) { return f.device().index; })
        .def("__repr__", &Function::repr);
    nb::object call_method = function_class.attr("__dict__")["_call"];
    set_function_call_method(call_method);
    bind_compile_support(m);
    bind_compile_stats(m);

    nb::class_<StructInfo>(m, "Struct", doc::kStruct)
        .def_ro("name", &StructInfo::name)
        .def_prop_ro("fields",
                     [](const StructInfo& s) {
                         nb::dict d;
                         for (const auto& [name, type] : s.fields) d[nb::str(name.c_str())] = nb::str(type.c_str());
                         return d;
                     })
        // m.Struct.method: a static method, or an instance method (`this` first, or .bind(this)).
        .def("__getattr__",
             [](const StructInfo& s, const std::string& name) -> nb::object {
                 if (name.size() > 1 && name[0] == '_' && name[1] == '_' && name != "__init")
                     throw nb::attribute_error(name.c_str());
                 nb::object fn = s.module.is_valid() ? nb::cast<Module&>(s.module).find_function(s.name + "." + name)
                                                     : nb::none();
                 if (fn.is_none() && s.module.is_valid()) nb::cast<Module&>(s.module).throw_if_set_aside(s.name + "." + name);
                 if (fn.is_none())
                     throw nb::attribute_error(("struct '" + s.name + "' has no method or sub-type named '" + name + "'").c_str());
                 return fn;
             })
        // module.Particle(...): the struct's constructors (its `__init` overloads), vectorized
        // like any call (python/shadegrad/_instances.py).
        .def("__call__",
             [](nb::handle self, nb::args args, nb::kwargs kwargs) {
                 return nb::module_::import_("shadegrad._instances").attr("construct_struct")(self, *args, **kwargs);
             })
        .def("as_struct", [](nb::handle self) { return nb::borrow(self); }, nb::sig("def as_struct(self) -> Struct"),
             "The struct itself (SlangPy's name).")
        .def_prop_ro("module", [](const StructInfo& s) { return s.module; }, "The Module it belongs to.")
        .def("__repr__", [](const StructInfo& s) {
            std::string r = "<shadegrad struct " + s.name + " {";
            for (size_t k = 0; k < s.fields.size(); ++k)
                r += (k ? "; " : " ") + s.fields[k].second + " " + s.fields[k].first + (k + 1 == s.fields.size() ? "; " : "");
            return r + "}>";
        });

    auto module_options = [](nb::handle options) {
        ModuleOptions o;
        if (options.is_none()) return o;
        for (auto [k, v] : nb::cast<nb::dict>(options)) {
            std::string key = nb::cast<std::string>(k);
            if (key == "strict_broadcasting") o.strict_broadcasting = nb::cast<bool>(v);
            else if (key == "deterministic") o.deterministic = nb::cast<bool>(v);
            else if (key == "fast_math") o.fast_math = nb::cast<bool>(v);
            else if (key == "defines") {
                if (!nb::isinstance<nb::dict>(v)) throw nb::type_error("module option 'defines' takes a dict");
                for (auto [name, value] : nb::cast<nb::dict>(v)) {
                    const std::string n = nb::cast<std::string>(nb::str(name));
                    const std::string text = nb::cast<std::string>(nb::str(value));
                    bool ok = !n.empty() && !(n[0] >= '0' && n[0] <= '9');
                    for (char c : n) ok &= c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                    if (!ok || text.find('\n') != std::string::npos)
                        throw nb::value_error(("defines: '" + n + "' is not a macro name with a one-line value").c_str());
                    o.defines.emplace_back(n, text);
                }
            } else
                throw nb::value_error(("unknown module option '" + key +
                                       "' (known: strict_broadcasting, deterministic, fast_math, defines)").c_str());
        }
        return o;
    };

    // link=[...]: the modules whose `export static const` values fill the new module's externs.
    auto linked_exports = [](nb::handle link) {
        std::vector<lang::LinkConstants> out;
        if (link.is_none()) return out;
        for (nb::handle m : nb::borrow<nb::sequence>(link)) {
            if (!nb::isinstance<Module>(m))
                throw nb::type_error(("link: expected shadegrad Modules, got " + std::string(Py_TYPE(m.ptr())->tp_name)).c_str());
            out.push_back(nb::cast<const Module&>(m).exports());
        }
        return out;
    };

    nb::class_<Module>(m, "Module", nb::dynamic_attr(), doc::kModule)
        .def_static(
            "load_from_source",
            [module_options, linked_exports](Device device, const std::string& name, const std::string& source,
                                             nb::handle options, nb::handle link) {
                return with_functions(new Module(device, name, source, module_options(options), "", linked_exports(link)));
            },
            nb::arg("device"), nb::arg("name"), nb::arg("source"), nb::arg("options") = nb::none(),
            nb::arg("link") = nb::none(), nb::sig(doc::kLoadFromSourceSig), doc::kLoadFromSource)
        .def_static(
            "load_from_file",
            [module_options, linked_exports](Device device, const std::string& name, nb::handle options, nb::handle link) {
                const std::string path = find_module_file(name, device.include_paths);  // SlangPy's search
                std::FILE* f = std::fopen(path.c_str(), "rb");
                if (!f) throw nb::value_error(("cannot read kernel file '" + path + "'").c_str());
                std::string text;
                char buf[65536];
                for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
                std::fclose(f);
                return with_functions(new Module(device, path, text, module_options(options), path, linked_exports(link)));
            },
            nb::arg("device"), nb::arg("path"), nb::arg("options") = nb::none(), nb::arg("link") = nb::none(),
            nb::sig(doc::kLoadFromFileSig), doc::kLoadFromFile)
        // The first lookup of a function caches it in the instance dict, so later `m.fn` lookups
        // never reach __getattr__.
        .def("__getattr__",
             [](nb::handle self, const std::string& name) -> nb::object {
                 Module& mod = nb::cast<Module&>(self);
                 if (name.size() > 1 && name[0] == '_' && name[1] == '_') throw nb::attribute_error(name.c_str());
                 if (std::shared_ptr<StructInfo> s = mod.find_struct(name)) return struct_of(self, s);
                 // module.float3 and the like: the value type (as a Tensor dtype, SlangPy's use).
                 nb::object value_types = nb::module_::import_("shadegrad._values").attr("VALUE_TYPES");
                 if (PyObject* vt = PyDict_GetItemString(value_types.ptr(), name.c_str())) return nb::borrow(vt);
                 nb::object fn = mod.function(name);
                 nb::setattr(self, name.c_str(), fn);
                 return fn;
             })
        .def("__getitem__",
             [](nb::handle self, const std::string& name) -> nb::object {
                 Module& mod = nb::cast<Module&>(self);
                 nb::object fn = mod.find_function(name);
                 if (!fn.is_none()) return fn;
                 if (std::shared_ptr<StructInfo> s = mod.find_struct(name)) return struct_of(self, s);
                 throw nb::key_error(("module '" + mod.name() + "' has no function or struct '" + name + "'").c_str());
             })
        .def("find_function", &Module::find_function, nb::arg("name"), nb::sig(doc::kFindFunctionSig), doc::kFindFunction)
        .def("require_function",
             [](Module& mod, const std::string& name) {
                 nb::object fn = mod.find_function(name);
                 if (fn.is_none()) mod.throw_if_set_aside(name);  // textures, samplers
                 if (fn.is_none()) throw nb::value_error(("module '" + mod.name() + "' has no function '" + name + "'").c_str());
                 return fn;
             },
             nb::arg("name"), nb::sig(doc::kRequireFunctionSig), doc::kRequireFunction)
        .def(
            "find_struct",
            [](nb::handle self, const std::string& name) -> nb::object {
                std::shared_ptr<StructInfo> s = nb::cast<Module&>(self).find_struct(name);
                return s ? struct_of(self, s) : nb::none();
            },
            nb::arg("name"), nb::sig(doc::kFindStructSig), doc::kFindStruct)
        .def(
            "require_struct",
            [](nb::handle self, const std::string& name) {
                Module& mod = nb::cast<Module&>(self);
                std::shared_ptr<StructInfo> s = mod.find_struct(name);
                if (!s) throw nb::value_error(("module '" + mod.name() + "' has no struct '" + name + "'").c_str());
                return struct_of(self, s);
            },
            nb::arg("name"), nb::sig(doc::kRequireStructSig), doc::kRequireStruct)
        .def("find_function_in_struct", &Module::find_function_in_struct, nb::arg("struct_name"), nb::arg("name"),
             nb::sig(doc::kFindFunctionInStructSig), doc::kFindFunctionInStruct)
        .def("function_names", &Module::function_names, doc::kFunctionNames)
        .def("struct_names", &Module::struct_names, doc::kStructNames)
        .def_prop_ro("name", &Module::name, "The module's name (as given to load_from_source, or the file's path).")
        .def_prop_ro("device", &Module::device, "The Device its kernels run on.")
        .def("__repr__", &module_repr)
        .def_prop_ro("strict_broadcasting", [](const Module& m) { return m.options().strict_broadcasting; })
        .def_prop_ro("deterministic", [](const Module& m) { return m.options().deterministic; })
        .def_prop_ro("fast_math", [](const Module& m) { return m.options().fast_math; });

    m.def("_register_value_kind", &register_value_kind, nb::arg("name"), nb::arg("classes"), nb::arg("helpers"));
    m.def("_value_kinds", &value_kinds);
    m.def("_coop_param_kinds", []() {  // the names of Function._coop_params()'s kinds (call/coop_launch.h)
        using K = call::CoopParamKind;
        nb::dict d;
        for (auto [name, kind] : {std::pair{"value", K::Value}, {"tensor_view", K::TensorView},
                                  {"diff_tensor_view", K::DiffTensorView}, {"diff_element", K::DiffElement},
                                  {"diff_result", K::DiffResult}, {"result", K::Result},
                                  {"diff_element_out", K::DiffElementOut}, {"struct", K::Struct},
                                  {"struct_field", K::StructField}, {"struct_out", K::StructOut}})
            d[name] = int(kind);
        return d;
    });
    bind_autograd_handle(m);

    m.def("_init_torch", &init_torch, nb::arg("native_path"), nb::arg("fallback"), nb::arg("force_fallback"));
    m.def("torch_bridge_status", &torch_bridge_status, doc::kTorchBridgeStatus);
    m.def("_bridge_refusal_reason", &bridge_refusal_reason);
    m.def("_describe_native", &describe_native);
    m.def("_describe_fallback", &describe_fallback);
    m.def("_cache_directory", &runtime::cache_directory);
    m.def("_tensor_info_size", []() { return sizeof(TensorInfo); });
    m.def("_set_nvrtc_search_dirs", &runtime::set_nvrtc_search_dirs);
    // Kernel faults (call/kernel_faults.h): CUDA faults surface at the next call on the device,
    // at these checks, or at the faulting call in debug mode.
    m.def(
        "synchronize",
        []() {
            {
                nb::gil_scoped_release release;
                call::synchronize_devices();
            }
        },
        "Waits for every kernel shadegrad launched on CUDA devices, then raises a RuntimeError for a fault\n"
        "one of them recorded (an index out of bounds, a loop past its [MaxIters] bound, an integer\n"
        "division by zero), naming the function, the parameter and the fault.");
    m.def("check_faults", &call::check_all_device_faults,
          "Raises a RuntimeError for a fault recorded by a CUDA kernel that has finished, without waiting.");
    m.def("set_debug_mode", &call::set_debug_mode, nb::arg("on"),
          "Debug mode (also SHADEGRAD_DEBUG=1): every CUDA launch waits for its kernel, so that a fault\n"
          "raises at the call that made it.");
    m.def("debug_mode", &call::debug_mode, doc::kDebugMode);
    m.def("cuda_status", []() {
        nb::dict d;
        d["driver"] = runtime::cuda_driver_status();
        d["nvrtc"] = runtime::nvrtc_status();
        d["available"] = runtime::cuda_available();
        d["device_count"] = runtime::cuda_device_count();
        return d;
    }, doc::kCudaStatus);
}
