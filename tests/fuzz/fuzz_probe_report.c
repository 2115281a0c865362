/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: metalcap-probe's output as the probe gate judges it (its
 * JSON report, exit status and stderr), and the shim's report line the
 * daemon reads from each injected process.  A verdict of PASS needs a
 * report that says both family and threadgroup are good and exit 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcd.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct launchctl_result	r;
	struct gate_entry		e;
	size_t				n;

	if (size < 2)
		return 0;
	/* First byte: the exit status; second: injected or not. */
	memset(&e, 0, sizeof e);
	r.code = (int)data[0] - 1;
	n = size - 2 < sizeof r.out - 1 ? size - 2 : sizeof r.out - 1;
	memcpy(r.out, data + 2, n);
	r.out[n] = '\0';
	memcpy(r.err, r.out, n < sizeof r.err - 1 ? n : sizeof r.err - 1);
	r.err[n < sizeof r.err - 1 ? n : sizeof r.err - 1] = '\0';
	gate_judge(&e, data[1] & 1, &r);
	if (e.status == GATE_PASS && r.code != 0)
		abort();
	if (e.status != GATE_PASS && e.reason[0] == '\0')
		abort();	/* refused without a reason */
	json_decref(e.report);
	/* The same bytes as the shim's report line. */
	{
		struct shim_seen	seen;

		marker_parse(&seen, r.out);
		if (memchr(seen.state, '\0', sizeof seen.state) == NULL ||
		    memchr(seen.reason, '\0', sizeof seen.reason) == NULL)
			abort();
	}
	return 0;
}
