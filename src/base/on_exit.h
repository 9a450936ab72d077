// src/base/on_exit.h — OnExit: runs a callable when the scope it lives in ends, however it ends
// (an exception too). For state that a check sets and must put back.
#pragma once

namespace sg {

template <class Restore>
struct OnExit {
    Restore restore;
    ~OnExit() { restore(); }
};
template <class Restore>
OnExit(Restore) -> OnExit<Restore>;

}  // namespace sg
