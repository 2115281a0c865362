/* SPDX-License-Identifier: MIT */
/*
 * Where a job settles (daemon/lifecycle.c), for every combination of the
 * twelve facts: 4096 rows, each checked against the rules written out
 * here a second way, as predicates, and the reason matched to the state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "mcd.h"

#define NFACTS	12

static void
facts_from_bits(unsigned bits, struct lifecycle_facts *f)
{
	bool	*b[NFACTS] = { &f->valid, &f->stopped, &f->failed,
	    &f->reverted, &f->wants_unlocked, &f->managed, &f->profile_exists,
	    &f->profile_ok, &f->profile_unlocks, &f->verdict_known,
	    &f->verdict_fails, &f->blocked };
	int	 i;

	for (i = 0; i < NFACTS; i++)
		*b[i] = (bits >> i) & 1;
}

/* The rules as predicates: what each state means. */
static enum job_state
expected(const struct lifecycle_facts *f)
{
	bool	runs = f->wants_unlocked && f->profile_exists &&
	    f->profile_ok && f->profile_unlocks;
	bool	open = f->valid && !f->stopped && !f->failed;

	if (!f->valid)
		return JOB_INVALID;
	if (f->stopped)
		return JOB_STOPPED;
	if (open && (f->reverted || (runs && f->verdict_known &&
	    f->verdict_fails)))
		return f->failed ? JOB_FAILED : JOB_REVERTED;
	if (f->failed)
		return JOB_FAILED;
	if (!runs)
		return JOB_STOCK;
	if (!f->verdict_known)
		return JOB_PROBING;
	return f->blocked ? JOB_BLOCKED : JOB_UNLOCKED;
}

static void
test_every_combination(void **state)
{
	struct lifecycle_facts	f;
	enum lifecycle_why	why;
	enum job_state		got;
	unsigned		bits, unlocked = 0;

	(void)state;
	for (bits = 0; bits < 1u << NFACTS; bits++) {
		facts_from_bits(bits, &f);
		got = lifecycle_settle(&f, &why);
		if (got != expected(&f))
			fail_msg("facts %#x: %s, want %s", bits,
			    job_state_name(got), job_state_name(expected(&f)));
		/* The reason fits the state. */
		switch (got) {
		case JOB_STOPPED:
			assert_int_equal(why, LC_WHY_STOPPED);
			break;
		case JOB_FAILED:
		case JOB_REVERTED:
			assert_int_equal(why, LC_WHY_INCIDENT);
			break;
		case JOB_PROBING:
			assert_int_equal(why, LC_WHY_PROBING);
			break;
		case JOB_BLOCKED:
			assert_int_equal(why, LC_WHY_BLOCKED);
			break;
		case JOB_UNLOCKED:
			assert_int_equal(why, LC_WHY_PARTIAL);
			unlocked++;
			break;
		case JOB_STOCK:
			assert_true(why == LC_WHY_NONE || why ==
			    LC_WHY_MANAGED || why == LC_WHY_NO_PROFILE ||
			    why == LC_WHY_BAD_PROFILE);
			assert_true(why != LC_WHY_MANAGED || f.managed);
			break;
		default:
			assert_int_equal(why, LC_WHY_NONE);
		}
	}
	/* Unlocked takes every fact in its favour: 2^1 rows (managed). */
	assert_int_equal(unlocked, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_combination),
	};

	return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
