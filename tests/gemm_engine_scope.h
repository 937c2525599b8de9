// gemm_engine_scope.h - one GEMM engine (and oneDNN route) for a scope of a test, the
// process's choice restored after it (core/gemm_engine.h, core/onednn_matmul.h).
#pragma once
#include <heed/core/gemm_engine.h>
#include <heed/core/onednn_matmul.h>

namespace heed::test {
struct EngineScope {
  GemmEngine before = gemm_engine();
  explicit EngineScope(GemmEngine e, detail::OnednnRoute r = detail::OnednnRoute::automatic) {
    set_gemm_engine(e);
    detail::set_onednn_route(r);
  }
  ~EngineScope() {
    set_gemm_engine(before);
    detail::set_onednn_route(detail::OnednnRoute::automatic);
  }
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;
};
}  // namespace heed::test
