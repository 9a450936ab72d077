// src/syntax/slangpy_module.cpp — the built-in `slangpy` module's text (slangpy_module.h).
#include "syntax/slangpy_module.h"

namespace sg::lang {

const char* slangpy_module_source() {
    // `shape[d]` of a CallShapeInfo is dimension d (outermost first) of the call element's id,
    // its group's id or its id within the group; `dimensionality` is the call's rank.
    return R"SG_SLANGPY(// the slangpy module built into shadegrad: SlangPy's CallShapeInfo
public struct CallShapeInfoIds
{
    public int which;
    public __subscript(int d) -> int
    {
        get
        {
            if (which == 0) return __slangpy_call_id(d);
            if (which == 1) return __slangpy_call_group_id(d);
            return __slangpy_call_group_thread_id(d);
        }
    }
};

public struct CallShapeInfo
{
    public CallShapeInfoIds shape;
    public property int dimensionality { get { return __slangpy_call_rank(); } }
    public static CallShapeInfo get_call_id() { return CallShapeInfo(CallShapeInfoIds(0)); }
    public static CallShapeInfo get_call_group_id() { return CallShapeInfo(CallShapeInfoIds(1)); }
    public static CallShapeInfo get_call_group_thread_id() { return CallShapeInfo(CallShapeInfoIds(2)); }
};
)SG_SLANGPY";
}

bool in_slangpy_module(SourceLoc loc) { return loc.file && loc.file->name == kSlangpyModuleName; }

}  // namespace sg::lang
