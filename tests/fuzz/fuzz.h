/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets: a private scratch folder, made once.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* "DIR/name", written with data; DIR is the target's scratch folder. */
void	fuzz_write_file(char *path, const char *name, const uint8_t *data,
	    size_t size);
const char *fuzz_dir(void);

#endif
