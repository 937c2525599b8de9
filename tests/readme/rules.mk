# tests/readme/rules.mk - check-readme, a step of `make test` (included by the top-level
# Makefile): README.md's code compiled and run from README.md itself.
# tests/readme/extract.awk writes README.md's code into $(BUILD)/readme: every snippet (a
# ```cpp block, or the ``double-backticked`` spans of one table cell or paragraph line) as a
# doctest case of examples.cpp in a fixture of tests/readme/names.h, and the complete program
# as program.cpp. tests/readme/checks.cpp includes snippets again to assert on their results.
# check-readme builds and runs both; a snippet that does not compile fails it with the
# README's line in the compiler's message (#line). The program must learn: its last printed
# loss below 1e-3. check-portable (tests/portable/rules.mk) runs the same program under QEMU.
README_BUILD := $(BUILD)/readme
# -Wno-unused: a snippet declares what its reader goes on to use (double norm = ...).
README_FLAGS  = $(BASEFLAGS) $(TEST_CXXFLAGS) -Wno-unused -include $(PCH_f32:.gch=) -Itests/readme -I$(README_BUILD)

# One recipe writes examples.cpp, program.cpp and snippets/; the other two wait for it.
$(README_BUILD)/examples.cpp: README.md tests/readme/extract.awk
	@rm -rf $(README_BUILD)/snippets && mkdir -p $(README_BUILD)/snippets
	awk -v out=$(README_BUILD) -f tests/readme/extract.awk README.md || { rm -f $@; exit 1; }
$(README_BUILD)/program.cpp: $(README_BUILD)/examples.cpp ;

$(README_BUILD)/examples.o: $(README_BUILD)/examples.cpp tests/readme/names.h $(PCH_f32) | deps $(UMBRELLA)
	$(CXX) $(README_FLAGS) -c $< -o $@

$(README_BUILD)/checks.o: tests/readme/checks.cpp tests/readme/names.h $(README_BUILD)/examples.cpp $(PCH_f32) | deps $(UMBRELLA)
	$(CXX) $(README_FLAGS) -c $< -o $@

$(README_BUILD)/examples: $(BUILD)/f32/tests/main.o $(README_BUILD)/examples.o $(README_BUILD)/checks.o $(LIB_f32)
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(README_BUILD)/program: $(README_BUILD)/program.cpp $(LIB_f32) | $(UMBRELLA)
	$(LINK_PROGRAM) $(LDLIBS)

# The cases run in run/, where the snippets' files (model.safetensors, ckpt.bin) land.
check-readme: $(README_BUILD)/examples $(README_BUILD)/program
	@rm -rf $(README_BUILD)/run && mkdir -p $(README_BUILD)/run
	cd $(README_BUILD)/run && ../examples --no-version
	$(README_BUILD)/program > $(README_BUILD)/program.txt || { cat $(README_BUILD)/program.txt; exit 1; }
	@tail -n 1 $(README_BUILD)/program.txt | awk '{ if ($$4 + 0 < 1e-3) { print "check-readme: the complete program learns: " $$0; exit 0 } \
	  print "check-readme: the complete program ends at " $$0 ", not below loss 1e-3"; exit 1 }'

.PHONY: check-readme
-include $(README_BUILD)/examples.d $(README_BUILD)/checks.d $(README_BUILD)/program.d
