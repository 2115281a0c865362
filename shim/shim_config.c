/* SPDX-License-Identifier: MIT */
/*
 * Configuration of libmetalcap from the environment.
 *
 * Every value must be a whole decimal or 0x-hexadecimal number with nothing
 * around it: no sign, no blanks, no suffix, no overflow.  strtoull alone
 * would accept " 1009", "+1009" and "-1" (which wraps), so the first
 * character is checked by hand.  Any error fails the whole configuration:
 * the process stays stock and the reason says which variable and why.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_config.h"

struct shim_config_var {
	const char	*ours;
	const char	*alias;		/* the reference shim's name */
};

static const struct shim_config_var shim_config_family = {
	"METALCAP_APPLE_FAMILY_MAX", "LUME_METAL_APPLE_FAMILY_MAX"
};
static const struct shim_config_var shim_config_tg_memory = {
	"METALCAP_MAX_THREADGROUP_MEMORY", "LUME_METAL_MAX_THREADGROUP_MEMORY"
};
static const struct shim_config_var shim_config_working_set = {
	"METALCAP_RECOMMENDED_WORKING_SET_SIZE",
	"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE"
};
static const struct shim_config_var shim_config_inherit = {
	"METALCAP_INHERIT", NULL
};

static void	shim_config_fail(char *, size_t, const char *, const char *,
		    const char *);
static const char *shim_config_lookup(const struct shim_config_var *,
		    shim_config_getenv_fn, void *, const char **);
static int	shim_config_number(const struct shim_config_var *,
		    shim_config_getenv_fn, void *, uint64_t, uint64_t,
		    uint64_t *, const char **, char *, size_t);

/* Parse a whole unsigned number; on error *why says what is wrong. */
int
shim_config_parse_number(const char *text, uint64_t *value, const char **why)
{
	unsigned long long	 parsed;
	char			*end;
	int			 base = 10;
	const char		*digits = text;

	if (*text == '\0') {
		*why = "is empty";
		return -1;
	}
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		digits = text + 2;
		if (!isxdigit((unsigned char)*digits)) {
			*why = "has no hexadecimal digits after 0x";
			return -1;
		}
	} else if (!isdigit((unsigned char)*digits)) {
		*why = "must start with a digit (no sign or blanks)";
		return -1;
	}
	errno = 0;
	parsed = strtoull(digits, &end, base);
	if (errno == ERANGE) {
		*why = "is larger than 2^64-1";
		return -1;
	}
	if (*end != '\0') {
		*why = "has characters after the number";
		return -1;
	}
	*value = parsed;
	return 0;
}

/*
 * A number as Cua's reference shim reads its LUME_METAL_* names
 * (parseUnsignedEnvironmentValue: strtoull base 0), so a value written for
 * it means the same here: a leading 0 is octal ("010" is 8, "08" has
 * characters after the number).  Blanks and signs stay refused, unlike
 * strtoull: " 1009" is no number, and "-1" would wrap to 2^64-1.
 */
int
shim_config_parse_reference(const char *text, uint64_t *value,
    const char **why)
{
	unsigned long long	 parsed;
	char			*end;

	if (text[0] != '0' || !isdigit((unsigned char)text[1]))
		return shim_config_parse_number(text, value, why);
	errno = 0;
	parsed = strtoull(text, &end, 8);
	if (errno == ERANGE) {
		*why = "is larger than 2^64-1";
		return -1;
	}
	if (*end != '\0') {
		*why = "has characters after the (octal) number";
		return -1;
	}
	*value = parsed;
	return 0;
}

/* Format "NAME=\"value\": why", with the value made printable and short. */
static void
shim_config_fail(char *out, size_t outlen, const char *name,
    const char *value, const char *why)
{
	char	shown[40];
	size_t	i;

	if (value == NULL) {
		snprintf(out, outlen, "%s %s", name, why);
		return;
	}
	for (i = 0; value[i] != '\0' && i < sizeof shown - 4; i++)
		shown[i] = isprint((unsigned char)value[i]) &&
		    value[i] != '"' ? value[i] : '?';
	if (value[i] != '\0')
		shown[i++] = '.', shown[i++] = '.', shown[i++] = '.';
	shown[i] = '\0';
	snprintf(out, outlen, "%s=\"%s\": %s", name, shown, why);
}

/* Our name wins over the alias, whatever the alias holds. */
static const char *
shim_config_lookup(const struct shim_config_var *var,
    shim_config_getenv_fn getenv_fn, void *ctx, const char **used)
{
	const char	*value;

	*used = var->ours;
	value = getenv_fn(var->ours, ctx);
	if (value == NULL && var->alias != NULL) {
		value = getenv_fn(var->alias, ctx);
		if (value != NULL)
			*used = var->alias;
	}
	return value;
}

/*
 * Read one numeric variable; fallback when unset, range-checked when set.
 * Under the reference's name it is read as the reference reads it: empty
 * is unset, a leading 0 is octal, and only the family has a limit.
 */
static int
shim_config_number(const struct shim_config_var *var,
    shim_config_getenv_fn getenv_fn, void *ctx, uint64_t fallback,
    uint64_t limit, uint64_t *value, const char **used, char *why,
    size_t whylen)
{
	const char	*text, *problem;
	bool		 reference;
	int		 rc;

	text = shim_config_lookup(var, getenv_fn, ctx, used);
	reference = text != NULL && *used == var->alias;
	if (text == NULL || (reference && *text == '\0' &&
	    var != &shim_config_family)) {
		*value = fallback;
		return 0;
	}
	if (reference && var != &shim_config_family)
		limit = UINT64_MAX;
	rc = reference ? shim_config_parse_reference(text, value, &problem) :
	    shim_config_parse_number(text, value, &problem);
	if (rc == -1) {
		shim_config_fail(why, whylen, *used, text, problem);
		return -1;
	}
	if (*value > limit) {
		char	range[64];

		snprintf(range, sizeof range, "is above the limit %llu",
		    (unsigned long long)limit);
		shim_config_fail(why, whylen, *used, text, range);
		return -1;
	}
	return 0;
}

/*
 * Load the whole configuration.  Returns 0, or -1 with why filled; on -1
 * the caller hooks nothing.  config->inherit is valid even on failure
 * unless METALCAP_INHERIT itself was the problem.
 */
int
shim_config_load(struct shim_config *config, shim_config_getenv_fn getenv_fn,
    void *ctx, char *why, size_t whylen)
{
	const char	*text, *used;

	memset(config, 0, sizeof *config);
	config->inherit = true;

	text = shim_config_lookup(&shim_config_inherit, getenv_fn, ctx, &used);
	if (text != NULL) {
		if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
			shim_config_fail(why, whylen, used, text,
			    "must be 0 or 1");
			return -1;
		}
		config->inherit = text[0] == '1';
	}

	if (shim_config_lookup(&shim_config_family, getenv_fn, ctx,
	    &used) == NULL) {
		shim_config_fail(why, whylen, shim_config_family.ours, NULL,
		    "is not set");
		return -1;
	}
	if (shim_config_number(&shim_config_family, getenv_fn, ctx, 0,
	    SHIM_FAMILY_APPLE_LAST, &config->family_max,
	    &config->family_source, why, whylen) == -1)
		return -1;
	if (config->family_max < SHIM_FAMILY_APPLE_MIN) {
		shim_config_fail(why, whylen, config->family_source,
		    getenv_fn(config->family_source, ctx),
		    "is below the first Apple family 1001");
		return -1;
	}

	if (shim_config_number(&shim_config_tg_memory, getenv_fn, ctx,
	    SHIM_DEFAULT_TG_MEMORY, SHIM_TG_MEMORY_LIMIT,
	    &config->threadgroup_memory, &used, why, whylen) == -1)
		return -1;
	return shim_config_number(&shim_config_working_set, getenv_fn, ctx, 0,
	    UINT64_MAX, &config->working_set, &used, why, whylen);
}
