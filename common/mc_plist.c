/* SPDX-License-Identifier: MIT */
/*
 * Property-list files: strict reading, atomic writing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc_plist.h"

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
	free(xml);
	return found;
}

/*
 * Read a plist file.  Symbolic links, directories, FIFOs, empty and huge
 * files are refused before libplist sees a byte; a tree with a NUL inside
 * a string is refused before anyone reads it.
 */
int
mc_plist_read_file(const char *path, plist_t *out, char *why, size_t whylen)
{
	struct stat	 sb;
	char		*buf = NULL;
	ssize_t		 n;
	size_t		 got = 0;
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
	while (got < (size_t)sb.st_size &&
	    (n = read(fd, buf + got, (size_t)sb.st_size - got)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(why, whylen, "%s", strerror(errno));
			goto fail;
		}
		got += (size_t)n;
	}
	plist_from_memory(buf, (uint32_t)got, out);
	if (*out == NULL) {
		snprintf(why, whylen, "is not a property list (XML or binary)");
		goto fail;
	}
	if (mc_plist_has_nul(*out)) {
		snprintf(why, whylen, "has a string or key with a NUL "
		    "character in it");
		plist_free(*out);
		*out = NULL;
		goto fail;
	}
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	if (fd != -1)
		close(fd);
	return -1;
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
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode))
	    == -1)
		goto fail;
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, mode) == -1 || fsync(fd) == -1)
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
		fsync(dfd);
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
	plist_to_xml_free(xml);
	return rc;
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
