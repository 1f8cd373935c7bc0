/*
 * libsecret, GLib and GIO as Keyjar uses them, declared here rather than taken from their
 * headers. Those headers are only found through pkg-config, and pkg-config's flags for
 * libsecret-1 include -pthread, which SwiftPM refuses ("prohibited flag(s): -pthread") with a
 * warning in every build of every package that depends on Keyjar, even one that never links
 * this module. Declared here, the module needs no flags at all: module.modulemap links the
 * libraries.
 *
 * Only what Keyjar calls is declared. Every declaration must match the system headers exactly;
 * scripts/check-libsecret-abi compiles this file, with the parts it includes and their
 * functions, after <libsecret/secret.h> (scripts/test runs it): the compiler rejects any
 * prototype or typedef that differs, and assertions compare the layouts of the structures and
 * the values of the constants, which in that check carry a keyjar_abi_ prefix (KEYJAR_ABI) so
 * as not to clash with the real ones.
 *
 * The declarations are in the parts included below (shim-*.h), each from here only and in this
 * order, each using what the ones before it declare; the check fails on a part of this directory
 * that this file does not include.
 */
#include <stddef.h>

#ifdef KEYJAR_ABI_CHECK
#define KEYJAR_ABI(name) keyjar_abi_##name
#else
#define KEYJAR_ABI(name) name
#endif

/* GLib, GObject and GIO: basic types, errors, variants, D-Bus. */
#include "shim-glib.h"
/* libsecret: schema, service and collection types and functions. */
#include "shim-libsecret.h"
/* The schemas Keyjar stores under, and the Chromium-family browsers' schemas it reads. */
#include "shim-schemas.h"
/* Attribute tables, and the Secret Service's items read by their paths. */
#include "shim-items.h"
/* Watching the Secret Service for changed or deleted items, and for its owner changing. */
#include "shim-watch.h"
