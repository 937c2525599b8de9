build-base/f32/layers/local_attention.o: layers/local_attention.cpp \
 layers/local_attention.h layers/../autograd/local_attention.h \
 layers/../autograd/attend.h layers/../autograd/attention_mask.h \
 layers/../autograd/../core/tensor.h layers/../autograd/../core/real.h \
 layers/../autograd/../core/shape.h layers/luong_attention.h \
 layers/module.h layers/scorer.h layers/../autograd/arith.h \
 layers/../autograd/linalg.h layers/../autograd/linear_op.h \
 layers/../autograd/reduce.h layers/../autograd/reduce_minmax.h \
 layers/../autograd/unary.h layers/../core/error.h layers/init.h \
 layers/repr.h
layers/local_attention.h:
layers/../autograd/local_attention.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/luong_attention.h:
layers/module.h:
layers/scorer.h:
layers/../autograd/arith.h:
layers/../autograd/linalg.h:
layers/../autograd/linear_op.h:
layers/../autograd/reduce.h:
layers/../autograd/reduce_minmax.h:
layers/../autograd/unary.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
