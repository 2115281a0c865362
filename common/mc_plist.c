/* SPDX-License-Identifier: MIT */
/*
 * Property-list files: strict reading, atomic writing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_os.h"
#include "mc_plist.h"
#include "mc_util.h"

/*
 * Does any string or key of the tree hold a NUL character?  libplist 2.2
 * reads one from a UTF-16 string of a binary plist (or &#0; in XML), and
 * then asserts -- aborting the process -- when the string is read.  Its
 * XML writer copies each string's full length, so a NUL in the output is
 * the only sign the public API gives.
 */
static bool
mc_plist_has_nul(plist_t root)
{
	char		*xml = NULL;
	uint32_t	 len = 0;
	bool		 found;

	plist_to_xml(root, &xml, &len);
	found = xml == NULL || memchr(xml, '\0', len) != NULL;
	mc_plist_mem_free(xml);
	return found;
}

/*
 * libplist parses recursively and expands a binary plist's shared
 * references into copies, with no limit of its own: 280 KB nested 40,000
 * deep overflows the stack, and 164 bytes of arrays that each name the one
 * before twice expand to gigabytes.  So the bytes are walked first,
 * without recursion, and refused past a depth or a count of values as
 * libplist would build them.
 */

struct mc_bplist {
	const uint8_t	*buf;
	size_t		 table;		/* offset of the offset table */
	uint64_t	 nobj;
	unsigned	 offsize, refsize;
};

/* Object i's element references (*refs, 0 for a scalar), from *start. */
static const char *
mc_bplist_object(const struct mc_bplist *b, uint64_t i, uint64_t *refs,
    size_t *start)
{
	size_t		off;
	uint8_t		kind;
	unsigned	size;
	uint64_t	count;

	off = (size_t)mc_be(b->buf + b->table + i * b->offsize,
	    b->offsize);
	if (off < 8 || off >= b->table)
		return "a binary plist object outside the file";
	kind = b->buf[off] >> 4;
	*refs = 0;
	if (kind != 0xa && kind != 0xc && kind != 0xd)	/* array, set, dict */
		return NULL;
	count = b->buf[off] & 0x0f;
	*start = off + 1;
	if (count == 0x0f) {
		if (off + 2 > b->table || (b->buf[off + 1] & 0xf0) != 0x10 ||
		    (size = 1u << (b->buf[off + 1] & 0x0f)) > 8 ||
		    off + 2 + size > b->table)
			return "a binary plist container with a malformed count";
		count = mc_be(b->buf + off + 2, size);
		*start = off + 2 + size;
	}
	if (count > (b->table - *start) / b->refsize / (kind == 0xd ? 2 : 1))
		return "a binary plist container larger than the file";
	*refs = kind == 0xd ? count * 2 : count;	/* keys, then values */
	return NULL;
}

#define MC_BPLIST_TOO_MANY	"more than " MC_PLIST_STR(MC_PLIST_MAX_NODES) \
	" values (a shared reference counts each time)"

struct mc_bplist_item {
	uint64_t	obj;
	unsigned	depth;
};

/* Walk from the top object, depth first, with a stack of our own. */
static const char *
mc_plist_scan_binary(const uint8_t *buf, size_t len)
{
	struct mc_bplist	 b = { .buf = buf };
	const uint8_t		*trailer = buf + len - 32;
	struct mc_bplist_item	*stack, it;
	size_t			 top = 0, cap = 64, start = 0;
	uint64_t		 refs, nodes = 0;
	const char		*why = NULL;

	if (len < 8 + 32)
		return "a binary plist too short for its trailer";
	b.offsize = trailer[6];
	b.refsize = trailer[7];
	b.nobj = mc_be(trailer + 8, 8);
	b.table = (size_t)mc_be(trailer + 24, 8);
	if (b.offsize < 1 || b.offsize > 8 || b.refsize < 1 || b.refsize > 8 ||
	    b.nobj == 0 || b.table < 8 || b.table > len - 32 ||
	    b.nobj > (len - 32 - b.table) / b.offsize ||
	    mc_be(trailer + 16, 8) >= b.nobj)
		return "a binary plist with a malformed trailer";
	stack = malloc(cap * sizeof *stack);
	stack[top].obj = mc_be(trailer + 16, 8);
	stack[top++].depth = 1;
	while (why == NULL && top > 0) {
		it = stack[--top];
		if (++nodes > MC_PLIST_MAX_NODES) {
			why = MC_BPLIST_TOO_MANY;
			break;
		}
		if ((why = mc_bplist_object(&b, it.obj, &refs, &start)) != NULL)
			break;
		if (refs > 0 && it.depth >= MC_PLIST_MAX_DEPTH)
			why = "nested deeper than " MC_PLIST_STR(
			    MC_PLIST_MAX_DEPTH) " levels";
		else if (refs > MC_PLIST_MAX_NODES - nodes)
			why = MC_BPLIST_TOO_MANY;
		for (; why == NULL && refs > 0; refs--, start += b.refsize) {
			if (top == cap)
				stack = realloc(stack, (cap *= 2) *
				    sizeof *stack);
			stack[top].obj = mc_be(buf + start, b.refsize);
			stack[top].depth = it.depth + 1;
			if (stack[top++].obj >= b.nobj)
				why = "a binary plist reference to no object";
		}
	}
	free(stack);
	return why;
}

/* Does the XML at p start with the word w? */
static bool
mc_plist_at(const char *p, const char *end, const char *w)
{
	size_t	n = strlen(w);

	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* Elements nested and counted, entities refused: no parse of our own. */
static const char *
mc_plist_scan_xml(const char *p, const char *end)
{
	unsigned long	depth = 0, nodes = 0;
	const char	*gt;

	for (; (p = memchr(p, '<', (size_t)(end - p))) != NULL; p = gt + 1) {
		if ((gt = memchr(p, '>', (size_t)(end - p))) == NULL)
			return NULL;	/* libplist says it is cut */
		if (mc_plist_at(p, end, "<!ENTITY") ||
		    (mc_plist_at(p, end, "<!DOCTYPE") &&
		    memchr(p, '[', (size_t)(gt - p)) != NULL))
			return "an XML entity or internal DTD subset";
		if (mc_plist_at(p, end, "<!--")) {
			gt = p + 3;
			while ((gt = memchr(gt, '>', (size_t)(end - gt))) !=
			    NULL && !(gt[-1] == '-' && gt[-2] == '-'))
				gt++;
			if (gt == NULL)
				return NULL;
			continue;
		}
		if (p[1] == '?' || p[1] == '!')
			continue;
		if (p[1] == '/') {
			if (depth > 0 && (mc_plist_at(p, end, "</array") ||
			    mc_plist_at(p, end, "</dict")))
				depth--;
			continue;
		}
		if (++nodes > MC_PLIST_MAX_NODES)
			return "more than " MC_PLIST_STR(MC_PLIST_MAX_NODES)
			    " elements";
		if ((mc_plist_at(p, end, "<array") ||
		    mc_plist_at(p, end, "<dict")) && gt[-1] != '/' &&
		    ++depth > MC_PLIST_MAX_DEPTH)
			return "nested deeper than " MC_PLIST_STR(
			    MC_PLIST_MAX_DEPTH) " levels";
	}
	return NULL;
}

/* Bytes libplist may parse; NULL, or why they are refused. */
const char *
mc_plist_refused(const char *buf, size_t len)
{
	if (len >= 8 && memcmp(buf, "bplist00", 8) == 0)
		return mc_plist_scan_binary((const uint8_t *)buf, len);
	return mc_plist_scan_xml(buf, buf + len);
}

/* Parse bytes as a plist with every limit above; -1 and why, or 0. */
int
mc_plist_read_memory(const char *buf, size_t len, plist_t *out, char *why,
    size_t whylen)
{
	const char	*refused;

	*out = NULL;
	if (len > MC_PLIST_MAX_FILE) {
		snprintf(why, whylen, "is larger than %d bytes",
		    MC_PLIST_MAX_FILE);
		return -1;
	}
	if ((refused = mc_plist_refused(buf, len)) != NULL) {
		snprintf(why, whylen, "refused: %s", refused);
		return -1;
	}
	mc_plist_from_memory(buf, (uint32_t)len, out);
	if (*out == NULL) {
		snprintf(why, whylen, "is not a property list (XML or binary)");
		return -1;
	}
	if (mc_plist_has_nul(*out)) {
		snprintf(why, whylen, "has a string or key with a NUL "
		    "character in it");
		plist_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/*
 * Read a plist file.  Symbolic links, directories, FIFOs, empty and huge
 * files are refused before libplist sees a byte; so is nesting or
 * expansion past the limits; a tree with a NUL inside a string is refused
 * before anyone reads it.
 */
int
mc_plist_read_file(const char *path, plist_t *out, char *why, size_t whylen)
{
	struct stat	 sb;
	char		*buf = NULL;
	ssize_t		 n;
	int		 fd = -1;

	*out = NULL;
	if (lstat(path, &sb) == -1) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(sb.st_mode)) {
		snprintf(why, whylen, "is a symbolic link (must be a regular "
		    "file)");
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(why, whylen, "is %s, not a regular file",
		    S_ISDIR(sb.st_mode) ? "a directory" : "a special file");
		return -1;
	}
	if (sb.st_size == 0 || sb.st_size > MC_PLIST_MAX_FILE) {
		snprintf(why, whylen, sb.st_size == 0 ? "is empty" :
		    "is larger than %d bytes", MC_PLIST_MAX_FILE);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
	    == -1 || (buf = malloc((size_t)sb.st_size)) == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		goto fail;
	}
	if ((n = mc_read_upto(fd, buf, (size_t)sb.st_size)) == -1) {
		snprintf(why, whylen, "%s", strerror(errno));
		goto fail;
	}
	if (mc_plist_read_memory(buf, (size_t)n, out, why, whylen) == -1)
		goto fail;
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	if (fd != -1)
		close(fd);
	return -1;
}

static int
mc_write_tmp_open(const char *tmp, mode_t mode)
{
	const int	flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC;
	int		fd;

	if ((fd = open(tmp, flags, mode)) == -1 && errno == EEXIST &&
	    unlink(tmp) == 0)
		fd = open(tmp, flags, mode);
	return fd;
}

/*
 * Make data durable at path: nobody ever sees a half-written file.  With
 * replace false, an existing path is left alone (EEXIST): the new file is
 * linked into place, which fails rather than overwrite.
 */
static int
mc_write_durable(const char *path, const char *data, size_t len, mode_t mode,
    bool replace, char *why, size_t whylen)
{
	char	tmp[4096], dir[4096];
	size_t	off = 0;
	ssize_t	n;
	int	fd, dfd, rc;

	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof tmp) {
		snprintf(why, whylen, "path too long");
		return -1;
	}
	/*
	 * The temporary name is guessable (a child knows its parent's pid):
	 * made anew, never through a link or a FIFO planted there; one left
	 * by a process of the same pid that died is replaced.
	 */
	if ((fd = mc_write_tmp_open(tmp, mode)) == -1)
		goto fail;
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		off += (size_t)n;
	}
	/* To the medium, not the drive's cache: mc_os.h, mc_os_sync. */
	if (fchmod(fd, mode) == -1 || mc_os_sync(fd) == -1)
		goto fail_fd;
	close(fd);
	if (replace)
		rc = rename(tmp, path);
	else if ((rc = link(tmp, path)) == 0)
		unlink(tmp);
	if (rc == -1)
		goto fail_tmp;
	snprintf(dir, sizeof dir, "%s", path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		mc_os_sync(dfd);
		close(dfd);
	}
	return 0;
fail_fd:
	n = errno;
	close(fd);
	errno = (int)n;
fail_tmp:
	n = errno;
	unlink(tmp);
	errno = (int)n;
fail:
	snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
	return -1;
}

int
mc_write_atomic(const char *path, const char *data, size_t len, mode_t mode,
    char *why, size_t whylen)
{
	return mc_write_durable(path, data, len, mode, true, why, whylen);
}

/* The same, but never over an existing file (errno EEXIST then). */
int
mc_write_new(const char *path, const char *data, size_t len, mode_t mode,
    char *why, size_t whylen)
{
	return mc_write_durable(path, data, len, mode, false, why, whylen);
}

int
mc_plist_write_atomic(const char *path, plist_t plist, mode_t mode, char *why,
    size_t whylen)
{
	char		*xml = NULL;
	uint32_t	 len = 0;
	int		 rc;

	plist_to_xml(plist, &xml, &len);
	if (xml == NULL) {
		snprintf(why, whylen, "cannot serialise the property list");
		return -1;
	}
	rc = mc_write_atomic(path, xml, len, mode, why, whylen);
	mc_plist_mem_free(xml);
	return rc;
}

/*
 * XML or binary, *out NULL otherwise.  libplist 2.3 also reads JSON and
 * OpenStep, where any word is a string: "junk" would be a property list,
 * and a job file would mean what it means on one version only.
 */
void
mc_plist_from_memory(const char *buf, uint32_t len, plist_t *out)
{
#ifdef PLIST_IS_INT
	plist_format_t	format = (plist_format_t)0;	/* 2.3.0 has no _NONE */

	*out = NULL;
	plist_from_memory(buf, len, out, &format);
	if (*out != NULL && format != PLIST_FORMAT_XML &&
	    format != PLIST_FORMAT_BINARY) {
		plist_free(*out);
		*out = NULL;
	}
#else
	plist_from_memory(buf, len, out);
#endif
}

void
mc_plist_mem_free(void *mem)
{
#ifdef PLIST_IS_INT
	plist_mem_free(mem);
#else
	free(mem);	/* what plist_to_xml_free and plist_to_bin_free do */
#endif
}

const char *
mc_plist_type_name(plist_t node)
{
	switch (plist_get_node_type(node)) {
	case PLIST_BOOLEAN:	return "a boolean";
	case PLIST_UINT:	return "an integer";
	case PLIST_REAL:	return "a real number";
	case PLIST_STRING:	return "a string";
	case PLIST_ARRAY:	return "an array";
	case PLIST_DICT:	return "a dictionary";
	case PLIST_DATE:	return "a date";
	case PLIST_DATA:	return "data";
	default:		return "something else";
	}
}

/* A copy of the string at key, or NULL when absent or not a string. */
char *
mc_plist_string(plist_t dict, const char *key)
{
	plist_t	 node = plist_dict_get_item(dict, key);
	char	*s = NULL;

	if (node != NULL && plist_get_node_type(node) == PLIST_STRING)
		plist_get_string_val(node, &s);
	return s;
}

bool
mc_plist_bool(plist_t dict, const char *key, bool fallback)
{
	plist_t	node = plist_dict_get_item(dict, key);
	uint8_t	v;

	if (node == NULL || plist_get_node_type(node) != PLIST_BOOLEAN)
		return fallback;
	plist_get_bool_val(node, &v);
	return v != 0;
}
