/* SPDX-License-Identifier: MIT */
#ifndef UNIT_H
#define UNIT_H

extern char	tmpdir[64];	/* made by setup, removed by teardown */

int		 setup(void **state);
int		 teardown(void **state);
const char	*write_file(const char *name, const char *body);
void		 unit_start(void);

#endif
