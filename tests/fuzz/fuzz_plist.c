/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the plist reader every daemon file goes through
 * (mc_plist_read_memory: the byte walk, then libplist).  Structure-aware:
 * an input whose first byte is odd is a recipe for a binary plist of up
 * to 255 objects -- arrays, sets and dictionaries naming later objects,
 * so chains nest deep and shared references multiply -- and one whose
 * first byte is 2 mod 4 a recipe for XML nesting; otherwise the bytes are
 * read as they are.  Whatever is accepted must be small enough to print.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc_plist.h"

/* Object k of n from recipe byte b: true, or a container of later ones. */
static size_t
fuzz_object(uint8_t *out, uint8_t b, size_t k, size_t n)
{
	static const uint8_t	kinds[] = { 0xa0, 0xc0, 0xd0 };
	size_t			len = 0, fan, i, ref;

	if (k + 1 == n || b % 4 == 3) {
		out[0] = 0x09;
		return 1;
	}
	fan = 1 + (b >> 2) % 4;
	if (kinds[b % 3] == 0xd0)
		fan = 2;	/* one key (a later object), one value */
	out[len++] = (uint8_t)(kinds[b % 3] | (kinds[b % 3] == 0xd0 ? 1 :
	    fan));
	for (i = 0; i < fan; i++) {
		ref = k + 1 + (size_t)((b >> 4) + i) % 3;
		out[len++] = (uint8_t)(ref < n ? ref : n - 1);
	}
	return len;
}

static size_t
fuzz_bplist(const uint8_t *recipe, size_t n, uint8_t *out)
{
	size_t	len = 8, offs[256], table, k;

	memcpy(out, "bplist00", 8);
	for (k = 0; k < n; k++) {
		offs[k] = len;
		len += fuzz_object(out + len, recipe[k], k, n);
	}
	table = len;
	for (k = 0; k < n; k++) {
		out[len++] = (uint8_t)(offs[k] >> 8);
		out[len++] = (uint8_t)offs[k];
	}
	memset(out + len, 0, 32);
	out[len + 6] = 2;
	out[len + 7] = 1;
	out[len + 15] = (uint8_t)n;
	out[len + 30] = (uint8_t)(table >> 8);
	out[len + 31] = (uint8_t)table;
	return len + 32;
}

/* Each byte opens (even) or closes (odd) an array or a dict. */
static size_t
fuzz_xml(const uint8_t *recipe, size_t n, char *out)
{
	size_t	len = 0, k;

	len += (size_t)sprintf(out, "<plist version=\"1.0\"><array>");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(out + len, "%s", recipe[k] % 2 ?
		    (recipe[k] & 2 ? "</array>" : "</dict>") :
		    (recipe[k] & 2 ? "<array>" : "<dict><key>k</key>"));
	len += (size_t)sprintf(out + len, "</array></plist>");
	return len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t	 buf[65536 * 20];
	const char	*bytes = (const char *)data;
	char		 why[256], *xml = NULL;
	uint32_t	 xlen = 0;
	size_t		 len = size;
	plist_t		 root;

	if (size > 1 && (data[0] & 1)) {
		len = fuzz_bplist(data + 1, size - 1 > 255 ? 255 : size - 1,
		    buf);
		bytes = (const char *)buf;
	} else if (size > 1 && data[0] % 4 == 2) {
		len = fuzz_xml(data + 1, size - 1 > 65536 ? 65536 : size - 1,
		    (char *)buf);
		bytes = (const char *)buf;
	}
	if (mc_plist_read_memory(bytes, len, &root, why, sizeof why) == 0) {
		plist_to_xml(root, &xml, &xlen);
		mc_plist_mem_free(xml);
		plist_free(root);
	}
	return 0;
}
