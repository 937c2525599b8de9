build-base/f32/layers/recurrent_scan.o: layers/recurrent_scan.cpp \
 layers/recurrent_scan.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/recurrent_base.h layers/module.h \
 layers/../autograd/compare.h layers/../autograd/dropout_op.h \
 layers/../autograd/node.h layers/../autograd/../core/allocator.h \
 layers/../autograd/grad_mode.h layers/../autograd/shape_ops.h \
 layers/../autograd/indexing.h layers/../autograd/views.h \
 layers/../core/error.h layers/init.h layers/repr.h
layers/recurrent_scan.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/recurrent_base.h:
layers/module.h:
layers/../autograd/compare.h:
layers/../autograd/dropout_op.h:
layers/../autograd/node.h:
layers/../autograd/../core/allocator.h:
layers/../autograd/grad_mode.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
