/* SPDX-License-Identifier: MIT */
/*
 * Test support for the injection judgement (fixture.h): the npm binaries
 * fetched once per group, a fresh directory for what the tests derive from
 * them, and the judgement's findings checked.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

char	fx_tmpdir[64];

int
fx_setup(void **state)
{
	(void)state;
	if (system(MC_TEST_SOURCE "/scripts/npm-macho-fixtures.sh " FX_BINS)
	    != 0)
		return -1;
	snprintf(fx_tmpdir, sizeof fx_tmpdir, "/tmp/mc-macho.XXXXXX");
	return mkdtemp(fx_tmpdir) == NULL ? -1 : 0;
}

int
fx_teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The Macs judged for. */
const struct mc_inject_host fx_silicon = { true, true, false, false };
const struct mc_inject_host fx_silicon_sip_off = { true, false, false,
    false };
const struct mc_inject_host fx_intel = { false, true, false, false };

/* The judgement of path on host, with one finding that must contain text. */
void
fx_expect_shim(const struct mc_inject_host *host, const char *path,
    const char *shim, bool inherit, enum mc_inject_level verdict,
    const char *text)
{
	struct mc_inject	j;
	int			i;

	mc_inject_judge(path, shim, inherit, host, &j);
	if (j.verdict != verdict)
		fail_msg("%s on %s: %s, want %s (%s)", path, j.host,
		    mc_inject_level_name(j.verdict),
		    mc_inject_level_name(verdict), j.n ? j.findings[0].text :
		    "no finding");
	for (i = 0; i < j.n; i++)
		if (strstr(j.findings[i].text, text) != NULL)
			return;
	fail_msg("%s on %s: no finding says '%s'", path, j.host, text);
}

/* The shim as the Linux build has none: the slices make macos ships. */
void
fx_expect_on(const struct mc_inject_host *host, const char *path, bool inherit,
    enum mc_inject_level verdict, const char *text)
{
	fx_expect_shim(host, path, NULL, inherit, verdict, text);
}

/* On Apple silicon with SIP on, the Mac metalcap is mostly for. */
void
fx_expect(const char *path, bool inherit, enum mc_inject_level verdict,
    const char *text)
{
	fx_expect_on(&fx_silicon, path, inherit, verdict, text);
}

/* The slice judged for path on host. */
const char *
fx_judged_slice(const struct mc_inject_host *host, const char *path,
    struct mc_inject *j)
{
	mc_inject_judge(path, NULL, false, host, j);
	return j->slice;
}

/* A copy of src at dst with mode, bytes at off replaced (len 0: none). */
void
fx_derive(const char *src, const char *dst, mode_t mode, long off,
    const void *bytes, size_t len)
{
	char	cmd[512];
	FILE	*f;

	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
	assert_int_equal(system(cmd), 0);
	if (len > 0) {
		assert_non_null(f = fopen(dst, "r+"));
		fseek(f, off, SEEK_SET);
		fwrite(bytes, 1, len, f);
		fclose(f);
	}
	assert_int_equal(chmod(dst, mode), 0);
}

void
fx_write_script(const char *path, const char *body)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	fputs(body, f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

void
fx_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t
fx_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* The whole of file, malloc'ed; *len its size. */
uint8_t *
fx_slurp(const char *file, size_t *len)
{
	uint8_t	*buf;
	FILE	*f;
	long	 n;

	assert_non_null(f = fopen(file, "rb"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	assert_non_null(buf = malloc((size_t)n));
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * A universal file at dst from slices of real binaries, each marked as
 * the cputype and subtype asked (in the fat header and its own Mach-O
 * header): the shape of a fat arm64e + x86_64 program without a Mac.
 */
void
fx_make_fat(const char *dst, const struct fx_slice *src, int n)
{
	uint8_t		 head[4096] = { 0 }, *bytes, *from;
	size_t		 len, size, at = 16384;
	FILE		*f;
	int		 i;

	assert_non_null(f = fopen(dst, "wb"));
	fx_put_be32(head, 0xcafebabe);
	fx_put_be32(head + 4, (uint32_t)n);
	fwrite(head, 1, sizeof head, f);
	for (i = 0; i < n; i++) {
		bytes = fx_slurp(src[i].file, &len);
		from = bytes;
		size = len;
		if (src[i].index >= 0) {
			from = bytes + fx_get_be32(bytes + 8 + 20 *
			    src[i].index + 8);
			size = fx_get_be32(bytes + 8 + 20 * src[i].index + 12);
		}
		/* The slice's own header: little-endian cputype, subtype. */
		memcpy(from + 4, &src[i].cputype, 4);
		memcpy(from + 8, &src[i].cpusubtype, 4);
		fx_put_be32(head + 8 + 20 * i, src[i].cputype);
		fx_put_be32(head + 8 + 20 * i + 4, src[i].cpusubtype);
		fx_put_be32(head + 8 + 20 * i + 8, (uint32_t)at);
		fx_put_be32(head + 8 + 20 * i + 12, (uint32_t)size);
		fx_put_be32(head + 8 + 20 * i + 16, 14);
		fseek(f, (long)at, SEEK_SET);
		fwrite(from, 1, size, f);
		at = (at + size + 16383) & ~(size_t)16383;
		free(bytes);
	}
	fseek(f, 0, SEEK_SET);
	fwrite(head, 1, sizeof head, f);
	fclose(f);
	assert_int_equal(chmod(dst, 0755), 0);
}
