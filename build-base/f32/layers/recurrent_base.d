build-base/f32/layers/recurrent_base.o: layers/recurrent_base.cpp \
 layers/recurrent_base.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h layers/recurrent_scan.h
layers/recurrent_base.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/recurrent_scan.h:
