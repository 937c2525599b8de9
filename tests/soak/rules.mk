# tests/soak/rules.mk - make soak and soak-tiny (included by the top-level Makefile).
# The long run (tests/soak/soak.cpp): seq2seq training with a checkpoint every 2 seconds,
# SIGKILLed at random moments and resumed, against a run never killed; passes when the two
# end bit for bit equal, every checkpoint loaded after every kill and no temporary file is
# left. Resident memory is printed as it goes. One thread per trainer, niced.
# soak-tiny, part of `make test`, is the same mechanism in seconds, and a sabotaged resume
# (one batch skipped) that must be caught (exit 3).
SOAK_MINUTES ?= 30
$(BUILD)/soak/soak: tests/soak/soak.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(LINK_PROGRAM) $(LDLIBS)

soak: $(BUILD)/soak/soak
	nice -n 10 $(BUILD)/soak/soak run --minutes $(SOAK_MINUTES) --dir $(BUILD)/soak/run

soak-tiny: $(BUILD)/soak/soak
	$(BUILD)/soak/soak run --seconds 4 --mean-kill 0.6 --ckpt-seconds 0.2 --min-kills 2 --dir $(BUILD)/soak/tiny
	@echo "soak-tiny: now a resume that skips one batch; the driver must report the difference (exit 3)"
	@$(BUILD)/soak/soak run --seconds 3 --mean-kill 0.6 --ckpt-seconds 0.2 --min-kills 1 --sabotage \
	  --dir $(BUILD)/soak/sabotage; s=$$?; [ $$s = 3 ] && echo "soak-tiny: caught" || \
	  { echo "soak-tiny: the sabotaged resume was not caught (exit $$s)"; exit 1; }

-include $(BUILD)/soak/soak.d
