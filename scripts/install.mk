# SPDX-License-Identifier: MIT
# make install, uninstall, man and deb; included by the top-level Makefile (which
# provides BUILD, TRACE_LIB, CUDA_LIB and the programs).  install builds what is
# not built yet and nothing else: with the programs up to date it only copies.
#
#   make install [PREFIX=/usr/local] [DESTDIR=]
#     $(PREFIX)/bin/             megatune, megatune-probe (calibrate, probe and proxy
#                                run in it; megatune executes it from its own folder)
#     $(PREFIX)/lib/megatune/    libmegatune_trace.so (the tracer of `megatune profile`)
#                                and libmegatune_cuda.so (the probes' CUDA back end) when
#                                built, and probe-<name> (links to ../../bin/megatune-probe,
#                                one per probe of `megatune-probe probe --list`); the
#                                programs look for the libraries beside themselves (a
#                                build folder), then in ../lib/megatune/
#     $(MANDIR)/man1/            megatune.1 and megatune-<command>.1, generated from the
#                                program's help (`megatune [CMD] --help=man`, make man)
#     $(BASHCOMPDIR)/megatune    bash completion   } both ask the installed program for
#     $(ZSHCOMPDIR)/_megatune    zsh completion    } its words as you type (--help=complete)
#   The models, cluster profiles and rules are compiled into megatune: no data files.
#   make uninstall [PREFIX=] [DESTDIR=]   removes what install puts there
#   make man     $(BUILD)/man/*.1
#   make deb     $(BUILD)/megatune_<version>_<arch>.deb, installing to /usr, its Depends
#                from dpkg-shlibdeps, or from ldd and dpkg -S without it (scripts/deb.sh)

PREFIX      ?= /usr/local
DESTDIR     ?=
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
INSTALL     ?= install
PKGLIBDIR    = $(PREFIX)/lib/megatune
MAN_DIR      = $(BUILD)/man
DEB_DIR      = $(BUILD)/deb
DPKG_SHLIBDEPS ?= dpkg-shlibdeps

.PHONY: install uninstall man deb

# one page per command of `megatune --help=complete` (the lines not starting with '-')
$(MAN_DIR)/.stamp: $(BUILD)/megatune $(BUILD)/megatune-probe
	@rm -rf $(MAN_DIR) && mkdir -p $(MAN_DIR)
	$(BUILD)/megatune --help=man >$(MAN_DIR)/megatune.1
	@for c in $$($(BUILD)/megatune --help=complete | sed -n 's/^\([a-z][a-z0-9-]*\)\t.*/\1/p'); do \
		echo "$(BUILD)/megatune $$c --help=man >$(MAN_DIR)/megatune-$$c.1"; \
		$(BUILD)/megatune $$c --help=man >$(MAN_DIR)/megatune-$$c.1 || exit 1; done
	@touch $@

man: $(MAN_DIR)/.stamp

install: all man
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 755 $(BUILD)/megatune $(BUILD)/megatune-probe $(DESTDIR)$(PREFIX)/bin/
	$(if $(strip $(TRACE_LIB) $(CUDA_LIB)),$(INSTALL) -m 644 $(TRACE_LIB) $(CUDA_LIB) \
		$(DESTDIR)$(PKGLIBDIR)/)
	@for n in $$($(BUILD)/megatune-probe probe --list); do \
		echo "ln -sf ../../bin/megatune-probe $(DESTDIR)$(PKGLIBDIR)/probe-$$n"; \
		ln -sf ../../bin/megatune-probe $(DESTDIR)$(PKGLIBDIR)/probe-$$n || exit 1; done
	$(INSTALL) -m 644 $(MAN_DIR)/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 scripts/completion/megatune.bash $(DESTDIR)$(BASHCOMPDIR)/megatune
	$(INSTALL) -m 644 scripts/completion/_megatune $(DESTDIR)$(ZSHCOMPDIR)/_megatune

# by name: it needs no build
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/megatune $(DESTDIR)$(PREFIX)/bin/megatune-probe
	rm -f $(DESTDIR)$(PKGLIBDIR)/libmegatune_trace.so $(DESTDIR)$(PKGLIBDIR)/libmegatune_cuda.so \
		$(DESTDIR)$(PKGLIBDIR)/probe-*
	rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null || true
	rm -f $(DESTDIR)$(MANDIR)/man1/megatune.1 $(DESTDIR)$(MANDIR)/man1/megatune-*.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/megatune $(DESTDIR)$(ZSHCOMPDIR)/_megatune

# installed into a staging folder with PREFIX=/usr, then packed
deb: all man
	@rm -rf $(DEB_DIR)
	@$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DEB_DIR))/debian/megatune \
		PREFIX=/usr MANDIR=/usr/share/man BASHCOMPDIR=/usr/share/bash-completion/completions \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions >/dev/null
	@DPKG_SHLIBDEPS="$(DPKG_SHLIBDEPS)" scripts/deb.sh $(DEB_DIR) $(BUILD)
