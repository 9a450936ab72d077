// src/lang/sema_coop.cpp — checks of cooperative kernels: TensorView<T> (its type, `v[...]`,
// load/store/size/stride/dims), the thread and block ids, barriers, Interlocked atomics,
// `groupshared` globals and the signature of a [CUDAKernel] function.
//
// A TensorView is a tensor type with TensorKind::view: its rank is known only at the launch, so
// any number of indices is accepted here and the generated code checks the count against the
// bound tensor's (a fault, as an out-of-range index is).
#include <map>

#include "lang/coop.h"
#include "lang/sema_internal.h"
#include "lang/wave.h"

namespace sg::lang {

namespace {

const Builtin kViewLoad{BuiltinKind::TensorLoad, IntrinsicId::Count, "load"};
const Builtin kViewStore{BuiltinKind::TensorStore, IntrinsicId::Count, "store"};
// DiffTensorView's store whose backward reads the output gradient once, without atomics
const Builtin kViewStoreOnce{BuiltinKind::TensorStore, IntrinsicId::Count, "storeOnce"};
// DiffTensorView's load whose backward stores the gradient once, without atomics
const Builtin kViewLoadOnce{BuiltinKind::TensorLoad, IntrinsicId::Count, "loadOnce"};
const Builtin kViewSize{BuiltinKind::ViewSize, IntrinsicId::Count, "size"};
const Builtin kViewStride{BuiltinKind::ViewStride, IntrinsicId::Count, "stride"};
const Builtin kViewDims{BuiltinKind::ViewDims, IntrinsicId::Count, "dims"};

/// Whether `t` may be a TensorView element: a scalar (bool too: a torch.bool tensor, one byte an
/// element, as in SlangPy), or a vector of a scalar other than bool.
bool is_view_element(const Type* t) {
    return t->is_scalar() || (t->is_vector() && t->scalar != ScalarKind::Bool);
}

/// The Interlocked methods of a TensorView (Slang's `v.InterlockedAdd(index, value, out
/// original)`, `v.InterlockedCompareExchange(index, compare, value)`): builtins of their own, so
/// that their element types are Slang's methods' (a double's add, a float's compare-exchange).
const Builtin kViewAtomics[8] = {
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedAdd"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedMin"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedMax"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedAnd"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedOr"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedXor"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedExchange"},
    {BuiltinKind::Interlocked, IntrinsicId::Count, "InterlockedCompareExchange"},
};

bool is_atomic_scalar(const Type* t, AtomicOp op, bool method = false) {
    if (!t->is_scalar()) return false;
    switch (t->scalar) {
    case ScalarKind::Int32:
    case ScalarKind::UInt32:
    case ScalarKind::Int64:
    case ScalarKind::UInt64: return true;
    case ScalarKind::Float:  // as Slang on CUDA; its TensorView<float> also compares bitwise
        return op == AtomicOp::Add || op == AtomicOp::Exchange || (method && op == AtomicOp::CompareExchange);
    case ScalarKind::Double: return method && op == AtomicOp::Add;  // TensorView<T>.InterlockedAdd: any T
    default: return false;
    }
}

}  // namespace

const Builtin* find_coop_builtin(const std::string& name) {
    // One Builtin per name (the name tells lowering which one it is), made once for the process
    // (a function-local static: thread-safe, as compilations may run on several threads).
    static const std::map<std::string, Builtin> table = [] {
        std::map<std::string, Builtin> t;
        for (int k = 0; k < kCoopIdCount; ++k) {
            const char* n = coop_id_name(CoopId(k));
            t.emplace(n, Builtin{BuiltinKind::CoopId, IntrinsicId::Count, n});
        }
        for (const char* n : {"GroupMemoryBarrier", "GroupMemoryBarrierWithGroupSync", "DeviceMemoryBarrier",
                              "DeviceMemoryBarrierWithGroupSync", "AllMemoryBarrier", "AllMemoryBarrierWithGroupSync"})
            t.emplace(n, Builtin{BuiltinKind::Barrier, IntrinsicId::Count, find_barrier(n)->name});
        for (int k = 0; k < 8; ++k) {
            const char* n = atomic_name(AtomicOp(k));
            t.emplace(n, Builtin{BuiltinKind::Interlocked, IntrinsicId::Count, n});
        }
        for (int k = 0; k < kWaveOpCount; ++k) {
            const char* n = wave_op_name(WaveOp(k));
            t.emplace(n, Builtin{BuiltinKind::Wave, IntrinsicId::Count, n});
        }
        return t;
    }();
    auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
}

// view_type = ("TensorView" | "DiffTensorView") "<" type ">" | "DiffTensorView"
// A DiffTensorView<T> (slangtorch's; T float, double or half, float when left out) is a
// TensorView with a gradient view beside it: differentiable, has_grad.
const Type* Sema::resolve_view_type(TypeExpr* te) {
    const bool diff = te->name == "DiffTensorView";
    const std::string what = diff ? "DiffTensorView" : "TensorView";
    if (te->arg_is_value.empty() && diff) {
        TensorKind kind;
        kind.access = TensorAccess::ReadWrite;
        kind.view = kind.differentiable = kind.has_grad = true;
        return types_.tensor(types_.float32(), 0, kind);
    }
    if (te->arg_is_value.empty()) {
        diags_.error(te->loc, "generic type 'TensorView' used without an element type: TensorView<float>", 30408);
        return types_.error_type();
    }
    if (te->arg_is_value.size() != 1 || te->arg_is_value[0]) {
        diags_.error(te->loc, what + " takes one element type: " + what + "<float>", 30060);
        return types_.error_type();
    }
    const Type* elem = resolve_type(te->type_args[0]);
    if (elem->is_error()) return elem;
    if (diff && !(elem->is_scalar() && is_floating(elem->scalar) && !elem->enumeration)) {
        // As Slang: the element must conform to __BuiltinFloatingPointType.
        diags_.error(te->loc, "DiffTensorView<" + type_name(elem) +
                                                ">: the element type must be float, double or half", 38029);
        return types_.error_type();
    }
    if (!is_view_element(elem)) {
        diags_.unsupported(te->loc, "TensorView of " + type_name(elem));
        return types_.error_type();
    }
    TensorKind kind;
    kind.access = TensorAccess::ReadWrite;
    kind.view = true;
    kind.differentiable = kind.has_grad = diff;
    return types_.tensor(elem, 0, kind);
}

/// `.primal` / `.diff` of a DiffTensorView: its value view and its gradient view, each a
/// TensorView<T> (Slang's `.diff` is a wrapper whose own `.diff` is that view; both spellings
/// reach it here). Null when `name` is neither.
const Type* Sema::check_view_member(Expr* e, const Type* view, const std::string& name) {
    // slangtorch's `.diff.diff`: Slang's `.diff` is a wrapper whose `.diff` is the gradient view;
    // here `.diff` is that view already, and its `.diff` is the same view.
    const Expr* base = e->operands.empty() ? nullptr : e->operands[0];
    if (name == "diff" && !view->tensor.has_grad && base && base->kind == ExprKind::Member && base->name == "diff" &&
        base->ref == RefKind::TensorMember && !base->operands.empty() && base->operands[0]->type &&
        base->operands[0]->type->is_tensor() && base->operands[0]->type->tensor.has_grad) {
        e->ref = RefKind::TensorMember;
        return view;
    }
    if (!view->tensor.has_grad || (name != "primal" && name != "diff")) return nullptr;
    TensorKind kind;
    kind.access = TensorAccess::ReadWrite;
    kind.view = true;
    e->ref = RefKind::TensorMember;
    // A DiffTensorView<half>'s gradient is float, as Slang's (its `.diff.diff` is always float).
    const bool half_grad = name == "diff" && view->element->is_scalar() && view->element->scalar == ScalarKind::Half;
    return types_.tensor(half_grad ? types_.float32() : view->element, 0, kind);
}

// view[i], view[i, j], view[uint2(i, j)] (.x is dimension 0)
const Type* Sema::check_view_index(Expr* at, const Type* view, const std::vector<Expr*>& index) {
    if (index.empty()) {
        diags_.error(at->loc, type_name(view) + " needs at least one index");
        return types_.error_type();
    }
    size_t count = 0;
    for (size_t k = 0; k < index.size(); ++k) {
        Expr* i = index[k];
        if (i->type->is_error()) return i->type;
        if (i->type->is_scalar() && is_floating(i->type->scalar)) {
            // As in Slang, a float index converts to uint, with warning 30081.
            warn_implicit_conversion(i, types_.uint32());
            Expr* cast = ast_.make<Expr>();
            cast->kind = ExprKind::Cast;
            cast->loc = i->loc;
            cast->operands = {i};
            cast->type = types_.uint32();
            for (Expr*& o : at->operands)
                if (o == i) o = cast;
            i = cast;
        }
        const bool vector_index = i->type->is_vector() && is_integer(i->type->scalar) && index.size() == 1;
        if (!is_integer_scalar(i->type) && !vector_index) {
            diags_.error(i->loc, type_name(view) + " index must be an integer or an integer vector, got " +
                                     type_name(i->type), 30019);
            return types_.error_type();
        }
        count += vector_index ? size_t(i->type->rows) : 1;
    }
    if (count > size_t(kMaxViewRank)) {
        diags_.error(at->loc, type_name(view) + " takes at most " + std::to_string(kMaxViewRank) + " indices, got " +
                                  std::to_string(count));
        return types_.error_type();
    }
    at->is_lvalue = true;
    return view->element;
}

const Type* Sema::check_view_method(Expr* e, const Type* view, const std::string& method) {
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    for (Expr* a : args)
        if (a->type && a->type->is_error()) return a->type;
    auto one_dim = [&](const Builtin* b) -> const Type* {
        if (args.size() != 1 || !is_integer_scalar(args[0]->type)) {
            diags_.error(e->loc, method + " takes one integer dimension", 39999);
            return types_.error_type();
        }
        e->builtin = b;
        return types_.uint32();
    };
    if (method == "load" || (method == "loadOnce" && view->tensor.has_grad)) {
        const Type* t = check_view_index(e, view, args);
        e->is_lvalue = false;
        if (!t->is_error()) e->builtin = method == "load" ? &kViewLoad : &kViewLoadOnce;
        return t;
    }
    if (AtomicOp op; find_atomic(method, op)) {
        // Slang's TensorView methods: (index, value, out original) and (index, compare, value),
        // the index a uint or a uint vector; checked as the free form on the element `view[index]`.
        const bool cas = op == AtomicOp::CompareExchange;
        const Type* el = view->element;
        const bool integer = el->is_scalar() && is_integer(el->scalar) && scalar_bits(el->scalar) >= 32 && !el->enumeration;
        // A vector element has InterlockedAdd only (componentwise, as Slang's TensorView<T>).
        const bool vector_add = el->is_vector() && op == AtomicOp::Add &&
                                is_atomic_scalar(types_.scalar(el->scalar), op, true);
        const bool has = integer || vector_add ||
                         (el->is_scalar() && ((el->scalar == ScalarKind::Float && (op == AtomicOp::Add ||
                                                                                  op == AtomicOp::Exchange || cas)) ||
                                              (el->scalar == ScalarKind::Double && op == AtomicOp::Add)));
        if (!has) {
            if (el->is_vector() && op == AtomicOp::Add)
                diags_.unsupported(e->loc, type_name(view) + "." + method + " on a vector of " +
                                               scalar_name(el->scalar));
            else
                diags_.error(e->operands[0]->loc, type_name(view) + " has no member '" + method + "'", 30027);
            return types_.error_type();
        }
        if (args.size() != 3) {
            diags_.error(e->loc, type_name(view) + "." + method +
                                     (cas ? " takes (index, compare, value)" : " takes (index, value, out original)"),
                         39999);
            return types_.error_type();
        }
        Expr* dest = ast_.make<Expr>();
        dest->kind = ExprKind::Index;
        dest->loc = args[0]->loc;
        dest->operands = {e->operands[0]->operands[0], args[0]};
        dest->type = check_view_index(dest, view, {args[0]});
        if (dest->type->is_error()) return dest->type;
        e->operands = {e->operands[0], dest, args[1], args[2]};
        e->builtin = &kViewAtomics[int(op)];
        return check_coop_call(e);
    }
    if (method == "store" || (method == "storeOnce" && view->tensor.has_grad)) {
        if (args.size() < 2) {
            diags_.error(e->loc, method + " takes the indices and a value", 39999);
            return types_.error_type();
        }
        std::vector<Expr*> index(args.begin(), args.end() - 1);
        const Type* t = check_view_index(e, view, index);
        e->is_lvalue = false;
        if (t->is_error()) return t;
        Expr* value = e->operands.back();
        if (!implicitly_convertible(value->type, view->element)) {
            diags_.error(value->loc, "cannot convert " + type_name(value->type) + " to " + type_name(view->element) +
                                         " in store", 30019);
            return types_.error_type();
        }
        warn_implicit_conversion(value, view->element);
        e->builtin = method == "store" ? &kViewStore : &kViewStoreOnce;
        return types_.void_type();
    }
    if (method == "size") return one_dim(&kViewSize);
    if (method == "stride") return one_dim(&kViewStride);
    if (method == "dims") {
        if (!args.empty()) {
            diags_.error(e->loc, "dims takes no arguments", 39999);
            return types_.error_type();
        }
        e->builtin = &kViewDims;
        return types_.uint32();
    }
    diags_.error(e->operands[0]->loc, type_name(view) + " has no member '" + method + "'", 30027);
    return types_.error_type();
}

const Type* Sema::check_coop_call(Expr* e) {
    const Builtin* b = e->builtin;
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    if (CoopId id; b->kind == BuiltinKind::CoopId && find_coop_id(b->name, id) && is_call_shape_id(id)) {
        // SlangPy's call-group ids (CallShapeInfo's methods call these): int(int dim), int().
        const size_t want = id == CoopId::CallRank ? 0 : 1;
        if (args.size() != want || (want == 1 && !is_integer_scalar(args[0]->type))) {
            diags_.error(e->loc, std::string(b->name) + (want ? " takes one integer dimension" : " takes no arguments"),
                         39999);
            return types_.error_type();
        }
        return types_.int32();
    }
    if (b->kind == BuiltinKind::CoopId || b->kind == BuiltinKind::Barrier) {
        if (!args.empty()) {
            diags_.error(e->loc, std::string(b->name) + " takes no arguments", 39999);
            return types_.error_type();
        }
        return b->kind == BuiltinKind::CoopId ? types_.vector(ScalarKind::UInt32, 3) : types_.void_type();
    }
    AtomicOp op;
    find_atomic(b->name, op);
    const bool method = b >= kViewAtomics && b < kViewAtomics + 8;  // a TensorView's method (view_atomic)
    const size_t values = op == AtomicOp::CompareExchange ? 2 : 1;  // (compare, value) or (value)
    if (args.size() != 1 + values && args.size() != 2 + values) {
        diags_.error(e->loc, std::string(b->name) + " takes " +
                                 (values == 2 ? "(dest, compare, value, out original)"
                                              : "(dest, value) or (dest, value, out original)"),
                     39999);
        return types_.error_type();
    }
    Expr* dest = args[0];
    if (!dest->is_lvalue) {
        diags_.error(dest->loc, std::string(b->name) + ": argument must be l-value", 30047);
        return types_.error_type();
    }
    // The destination is one element of shared memory: a groupshared variable (or an element of
    // one) or an element of a TensorView / RWStructuredBuffer.
    // A field of a struct or one component of a vector, of a groupshared element (`tiles[t].count`,
    // `pair.x`) or of a TensorView's or writable buffer's element (`bins[i].count`, `v[i].y`): the
    // path lowering gives the atomic (lower_coop.cpp).
    const Expr* root = dest;
    bool path = false;
    while (root->kind == ExprKind::Member && !root->operands.empty() && root->operands[0]->type &&
           ((root->ref == RefKind::Field && root->operands[0]->type->is_struct()) ||
            (root->ref == RefKind::Swizzle && root->swizzle.size() == 1 && root->operands[0]->type->is_vector()))) {
        root = root->operands[0];
        path = true;
    }
    bool element = false;
    while (root->kind == ExprKind::Index && !root->operands[0]->type->is_tensor()) root = root->operands[0];
    if (root->kind == ExprKind::Index && root->operands[0]->type->is_tensor()) {
        // A TensorView's, or a writable tensor's or RWStructuredBuffer's, whole element.
        // Also a field of its struct element or a component of its vector element (the path).
        const TensorKind& k = root->operands[0]->type->tensor;
        element = (root == dest || path) && (k.view || k.access != TensorAccess::Read);
    }
    else if (root->kind == ExprKind::Name && root->var_ref && root->var_ref->is_groupshared) element = true;
    // A local variable or parameter (or a field, component or element of one), which slangc
    // accepts too: no other thread sees it, so the operation is a plain read, update and write.
    else if (root->kind == ExprKind::Name && root->var_ref && !root->var_ref->is_global) element = true;
    if (!element) {
        diags_.unsupported(dest->loc, std::string(b->name) + " on anything but a local or groupshared variable (its "
                                                             "array elements, struct fields and vector components) or "
                                                             "an element of a TensorView, a writable tensor or an "
                                                             "RWStructuredBuffer (or a struct field or vector "
                                                             "component of one)");
        return types_.error_type();
    }
    // A TensorView's InterlockedAdd on a vector element adds componentwise (lower_coop.cpp).
    const Type* leaf = method && dest->type->is_vector() ? types_.scalar(dest->type->scalar) : dest->type;
    if (!is_atomic_scalar(leaf, op, method)) {
        diags_.error(dest->loc, std::string(b->name) + " takes an int, uint, int64_t or uint64_t destination" +
                                    (op == AtomicOp::Add || op == AtomicOp::Exchange ? std::string(" (or float)") : "") +
                                    ", got " + type_name(dest->type), 39999);
        return types_.error_type();
    }
    for (size_t k = 1; k <= values; ++k) {
        if (!implicitly_convertible(args[k]->type, dest->type)) {
            diags_.error(args[k]->loc, "cannot convert " + type_name(args[k]->type) + " to " + type_name(dest->type) +
                                           " in " + b->name, 30019);
            return types_.error_type();
        }
        warn_implicit_conversion(args[k], dest->type);
    }
    if (args.size() == 2 + values) {
        Expr* out = args.back();
        require_lvalue(out, "pass to an out parameter", 30047);
        if (out->is_lvalue && out->type != dest->type && !implicitly_convertible(dest->type, out->type))
            diags_.error(out->loc, "the original value is a " + type_name(dest->type) + ", not a " + type_name(out->type),
                         39999);
    }
    return types_.void_type();
}

void Sema::check_groupshared(VarDecl* g) {
    g->is_global = true;
    g->type = g->type_expr ? resolve_type(g->type_expr) : types_.error_type();
    if (!g->type_expr) diags_.error(g->loc, "a groupshared variable needs a type", 39999);
    if (g->init) diags_.error(g->loc, "'" + g->name + "' cannot have an initializer because it is groupshared", 30623);
    if (g->is_const || g->is_static) diags_.unsupported(g->loc, "'static' or 'const' groupshared variable");
    const Type* t = g->type;
    while (t->is_array()) t = t->element;
    if (!t->is_error() && !t->is_scalar() && !t->is_vector() && !t->is_matrix() && !t->is_struct()) {
        diags_.unsupported(g->loc, "a groupshared variable of type " + type_name(g->type));
        g->type = types_.error_type();
    }
}

void Sema::check_kernel_signature(FunctionDecl* f) {
    if (f->result_type && !f->result_type->is_void() && !f->result_type->is_error())
        diags_.error(f->loc, "CUDA kernel return type error: a [CUDAKernel] function returns void", 31213);
    if (!f->generic_params.empty()) diags_.unsupported(f->loc, "a generic [CUDAKernel] function");
    for (VarDecl* p : f->params) {
        if (!p->type || p->type->is_error()) continue;
        if (p->dir != ParamDir::In) {
            diags_.unsupported(p->loc, "an out or inout parameter of a [CUDAKernel] function");
            continue;
        }
        const Type* t = p->type;
        const bool plain = t->is_scalar() || t->is_vector() || t->is_matrix();
        if (!(t->is_tensor() && t->tensor.view) && !plain)
            diags_.unsupported(p->loc, "a [CUDAKernel] parameter of type " + type_name(t) +
                                           " (kernels take TensorView<T>, scalars, vectors and matrices)");
    }
}

}  // namespace sg::lang
