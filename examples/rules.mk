# examples/rules.mk - make examples and make demo (included by the top-level Makefile).
# Each examples/*.cpp is one program; examples/common/*.h are header-only helpers they share.
# Pictures are drawn with Debian's libstb (stb_truetype, stb_image_write: -lstb holds them).
EXAMPLES     := $(patsubst examples/%.cpp,$(BUILD)/examples/%,$(wildcard examples/*.cpp))
EXAMPLE_LIBS := -lstb
$(BUILD)/examples/%: examples/%.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(LINK_PROGRAM) $(EXAMPLE_LIBS) $(LDLIBS)

examples: $(EXAMPLES)

demo: $(BUILD)/examples/translate
	@mkdir -p $(BUILD)/demo
	$(BUILD)/examples/translate --out $(BUILD)/demo --min-accuracy 99

-include $(EXAMPLES:=.d)
