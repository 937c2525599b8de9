build-base/f32/autograd/topk.o: autograd/topk.cpp autograd/topk.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/reduce.h autograd/reduce_minmax.h \
 autograd/../core/error.h autograd/../core/parallel.h \
 autograd/shape_ops.h autograd/indexing.h autograd/views.h
autograd/topk.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
