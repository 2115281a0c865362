/* SPDX-License-Identifier: MIT */
/*
 * The shim as a witness: the Metal calls whose failure shows a broken
 * pipeline, watched from inside the process, so that what the daemon
 * acts on is what the process did, not text a client had it print.
 */
#ifndef SHIM_WITNESS_H
#define SHIM_WITNESS_H

#include <objc/runtime.h>
#include <stddef.h>

void	shim_witness_install(Class device_class, const char *report_path,
	    char *watched, size_t watchedlen);

#endif
