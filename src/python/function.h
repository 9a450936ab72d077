// src/python/function.h — the Python-visible objects: Device, Module, Function, GridArg.
// Function::call is the hot path: describe arguments in C++, build the key, look up the plan,
// allocate outputs through the torch bridge, launch (inside an autograd node when needed).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/user_module.h"

namespace sg::py {

namespace nb = nanobind;

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = -1;
};

/// `sg.grid(shape)`: the call index as an argument.
struct GridArg {
    std::vector<int64_t> shape;
};

class Function {
public:
    Function(std::shared_ptr<call::UserModule> module, std::string name, Device device);
    ~Function();
    Function(const Function&) = delete;
    Function& operator=(const Function&) = delete;

    nb::object call(nb::args args, nb::kwargs kwargs);
    /// The generated code of the kernels this call would run (glue, target source, IR).
    std::string debug_code(nb::args args, nb::kwargs kwargs);
    /// The readable rendering of this call's key.
    std::string call_key(nb::args args, nb::kwargs kwargs);
    /// Number of cached call plans.
    size_t plan_count() const { return plans_.size(); }
    const std::string& name() const { return name_; }
    const std::shared_ptr<call::UserModule>& user_module() const { return module_; }
    Device device() const { return device_; }

private:
    /// Describes the arguments into the thread's scratch arrays; returns the argument count.
    size_t describe(nb::args& args, nb::kwargs& kwargs, bool& grad_mode);
    std::shared_ptr<call::CallPlan> plan_for(size_t count, bool grad_mode);

    std::shared_ptr<call::UserModule> module_;
    std::string name_;
    Device device_;
    uint32_t id_;
    size_t positional_ = 0;
    std::unordered_map<call::CallKey, std::shared_ptr<call::CallPlan>, call::CallKeyHash> plans_;
};

class Module {
public:
    Module(Device device, std::string name, std::string source);
    nb::object function(const std::string& name);
    std::vector<std::string> function_names() const { return module_->function_names(); }
    const std::string& name() const { return module_->name(); }
    Device device() const { return device_; }

private:
    Device device_;
    std::shared_ptr<call::UserModule> module_;
    std::unordered_map<std::string, nb::object> functions_;
};

}  // namespace sg::py
