build-base/f32/layers/luong_attention.o: layers/luong_attention.cpp \
 layers/luong_attention.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h layers/scorer.h \
 layers/../autograd/attend.h layers/../autograd/attention_mask.h \
 layers/../autograd/arith.h layers/../autograd/linalg.h \
 layers/../autograd/linear_op.h layers/../autograd/shape_ops.h \
 layers/../autograd/indexing.h layers/../autograd/views.h \
 layers/../autograd/unary.h layers/../core/error.h layers/init.h \
 layers/repr.h
layers/luong_attention.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/scorer.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/arith.h:
layers/../autograd/linalg.h:
layers/../autograd/linear_op.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../autograd/unary.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
