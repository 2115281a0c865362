/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a job file as metalcapd reads it (jobfile_load: the strict
 * plist reader, XML or binary, then every key's checks), and the agent
 * rendered from a job that passes.  Any bytes: only an error may come out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "mc_plist.h"
#include "mcd.h"

static plist_t			job_template;
static struct paths		paths;
static struct profile_set	profiles;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	why[256];

	(void)argc;
	(void)argv;
	log_open(NULL, false);
	if (mc_plist_read_file(MC_FUZZ_SOURCE "/agent-template/job.plist",
	    &job_template, why, sizeof why) == -1 ||
	    paths_init(&paths, fuzz_dir(), "fuzz", why, sizeof why) == -1)
		abort();
	profile_load_all(&profiles, paths.profiles);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag	 errors = { 0 }, warnings = { 0 };
	struct job_spec	*spec;
	char		 path[64];

	fuzz_write_file(path, "llama.plist", data, size);
	spec = jobfile_load(path, &errors, &warnings);
	if (spec == NULL && errors.count == 0)
		abort();	/* refused without saying why */
	if (spec != NULL) {
		struct render_input	in = { .name = "llama", .spec = spec,
		    .profile = profile_find(&profiles, "apple9"),
		    .paths = &paths };
		plist_t			agent = render_agent(job_template, &in);
		size_t			len;
		char			*xml = render_xml(agent, &len);

		free(xml);
		plist_free(agent);
		jobfile_free(spec);
	}
	diag_clear(&errors);
	diag_clear(&warnings);
	unlink(path);
	return 0;
}
