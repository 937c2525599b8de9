build-base/f32/autograd/relative_position_op.o: \
 autograd/relative_position_op.cpp autograd/relative_position_op.h \
 autograd/attention_mask.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h autograd/../core/parallel.h autograd/node.h \
 autograd/../core/allocator.h autograd/grad_mode.h
autograd/relative_position_op.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/node.h:
autograd/../core/allocator.h:
autograd/grad_mode.h:
