// src/call/call_group.cpp — SlangPy's call groups in the call layer (see call_group.h).
#include "call/call_group.h"

#include "call/errors.h"

namespace sg::call {

namespace {

std::string shape_text(const std::vector<int>& shape) {
    std::string out = "(";
    for (size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
    return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

void check_call_group_shape(const std::string& function, const std::vector<int>& shape) {
    const std::string what = function + "(): call_group_shape(): parameter 'shape' " + shape_text(shape);
    if (shape.size() > 8)
        throw_value_error(what + " has " + std::to_string(shape.size()) + " dimensions; a call has at most 8");
    int64_t elements = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] < 1)
            throw_value_error(what + ": extent " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                              " (call_group_shape[" + std::to_string(d) + "] = " + std::to_string(shape[d]) +
                              " is invalid. All call_group_shape elements must be >= 1.)");
        elements *= shape[d];
        if (elements > kMaxCallGroupElements)
            throw_value_error(what + " has more than " + std::to_string(kMaxCallGroupElements) +
                              " elements: a group runs as one block, of at most " +
                              std::to_string(kMaxCallGroupElements) + " threads");
    }
}

void apply_call_group(const Binding& b, const CallModifiers& modifiers, codegen::CodegenOptions& options) {
    const std::vector<int>& shape = modifiers.call_group;
    const int rank = b.call_rank;
    if (int(shape.size()) > rank)
        throw_value_error(b.function + "(): call_group_shape(): parameter 'shape' " + shape_text(shape) + " has " +
                          std::to_string(shape.size()) + " dimensions, the call's shape " + std::to_string(rank) +
                          " (call_group_shape dimensionality (" + std::to_string(shape.size()) +
                          ") must be <= call_shape dimensionality (" + std::to_string(rank) +
                          "). call_group_shape cannot have more dimensions than call_shape.)");
    if (modifiers.deterministic)
        throw_type_error(b.function + "(): call_group_shape() in deterministic mode is not supported yet (the "
                                      "gradients of a call in call groups are added with atomics)");
    options.call_group_rank = rank;
    const int pad = rank - int(shape.size());
    for (int d = 0; d < 8; ++d) options.call_group[d] = d >= pad && d < rank ? shape[size_t(d - pad)] : 1;
}

void call_group_launch(const CompiledKernel& kernel, const codegen::CallHeader& header, runtime::LaunchRequest& request) {
    const codegen::CodegenOptions& o = kernel.options;
    const int rank = o.call_group_rank >= 0 ? o.call_group_rank : header.rank;
    const int32_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const int block = kernel.generated.call_group_block;
    const int64_t blocks =
        codegen::call_group_blocks(header.shape, rank, o.call_group_rank >= 0 ? o.call_group : ones, block);
    request.total = blocks;
    request.elements_per_thread = 1;
    request.coop_block[0] = block;
    request.coop_block[1] = request.coop_block[2] = 1;
    request.coop_grid[0] = blocks;
    request.coop_grid[1] = request.coop_grid[2] = 1;
}

}  // namespace sg::call
