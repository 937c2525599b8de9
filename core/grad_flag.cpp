// grad_flag.cpp - see grad_flag.h.
#include "grad_flag.h"

namespace heed {

static thread_local bool grad_enabled = true;
bool GradMode::enabled() { return grad_enabled; }
void GradMode::set_enabled(bool on) { grad_enabled = on; }

}  // namespace heed
