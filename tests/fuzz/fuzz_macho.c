/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a program file as the injection judgement reads it
 * (mc_macho_read: fat and thin headers, load commands, the code
 * signature's SuperBlob, CodeDirectory and entitlements; then
 * mc_inject_judge).  Any bytes: a judgement, never a crash or a read past
 * what the file holds.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "mc_macho.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mc_macho		m;
	struct mc_inject	j;
	struct mc_inject_host	host = { true, true, false, false };
	char			path[64], why[128];

	fuzz_write_file(path, "program", data, size);
	chmod(path, 0755);
	mc_macho_read(path, &m, why, sizeof why);
	mc_inject_judge(path, NULL, false, &host, &j);
	host.apple_silicon = false;
	mc_inject_judge(path, NULL, false, &host, &j);
	unlink(path);
	return 0;
}
