build-base/f32/autograd/tensor_methods.o: autograd/tensor_methods.cpp \
 autograd/arith.h autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/linalg.h autograd/reduce.h \
 autograd/reduce_minmax.h autograd/shape_ops.h autograd/indexing.h \
 autograd/views.h autograd/softmax.h autograd/topk.h autograd/unary.h
autograd/arith.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/linalg.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
autograd/softmax.h:
autograd/topk.h:
autograd/unary.h:
