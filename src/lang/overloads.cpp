// src/lang/overloads.cpp — overload resolution (overloads.h).
#include "lang/overloads.h"

#include "lang/sema.h"

namespace sg::lang {

int conversion_cost(const Type* from, const Type* to) {
    if (from == to) return 0;
    if (!implicitly_convertible(from, to)) return -1;
    if (from->is_scalar() && !to->is_scalar()) return 2;
    return 1;
}

bool tensor_accepts(const Type* param, const Type* arg, bool glue) {
    if (!param->is_tensor() || !arg->is_tensor()) return false;
    if (param == arg) return true;
    if (param->element != arg->element || param->rank != arg->rank) return false;
    const TensorKind& p = param->tensor;
    const TensorKind& a = arg->tensor;
    if (!p.interface)
        return glue && p.differentiable && a.differentiable && !a.interface && p.access == a.access && !a.has_grad &&
               !p.atomic && !a.atomic;
    if (p.differentiable && !a.differentiable) return false;
    if (p.access == TensorAccess::Read) return a.access != TensorAccess::Write;
    if (p.access == TensorAccess::Write) return a.access != TensorAccess::Read;
    return a.access == TensorAccess::ReadWrite;
}

OverloadChoice choose_overload(const std::vector<FunctionDecl*>& candidates, const std::vector<Expr*>& args,
                               bool glue) {
    OverloadChoice out;
    int best_cost = 1 << 30;
    for (FunctionDecl* f : candidates) {
        if (!accepts_argument_count(*f, args.size())) continue;
        int cost = 0;
        for (size_t k = 0; k < args.size() && cost >= 0; ++k) {
            const Expr* a = args[k];
            const Type* pt = f->params[k]->type;
            if (a->kind == ExprKind::InitList) continue;
            int c = pt->is_tensor() ? (tensor_accepts(pt, a->type, glue) ? (pt == a->type ? 0 : 1) : -1)
                                    : conversion_cost(a->type, pt);
            if (f->params[k]->dir != ParamDir::In && c != 0) c = -1;  // out/inout need the exact type
            cost = c < 0 ? -1 : cost + c;
        }
        if (cost < 0) continue;
        // At equal cost a concrete function is preferred to an instantiation of a generic.
        cost = cost * 2 + (f->generic_origin ? 1 : 0);
        if (cost < best_cost) {
            out.best = f, best_cost = cost, out.ambiguous = false;
        } else if (cost == best_cost) {
            out.ambiguous = true;
        }
    }
    return out;
}

}  // namespace sg::lang
