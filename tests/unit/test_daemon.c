/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of metalcapd's pure parts: job-file parsing over good and bad
 * files, rendering, the msgpack-RPC framing, and the state file.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mc_plist.h"
#include "mc_rpc.h"
#include "mcd.h"
#include "protocol.h"

#define PROGRAM		MC_TEST_BUILD "/tests/fake-llama"

static char	tmpdir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/mc-unit.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *
write_file(const char *name, const char *body)
{
	static char	path[256];
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	return path;
}

/* A job plist with ProgramArguments and the extra XML given. */
static const char *
job_xml(const char *name, const char *extra)
{
	static char	body[4096];

	snprintf(body, sizeof body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
	    "<plist version=\"1.0\"><dict><key>ProgramArguments</key><array>"
	    "<string>" PROGRAM "</string><string>--port</string>"
	    "<string>8080</string></array>%s</dict></plist>", extra);
	return write_file(name, body);
}

/* Load path; assert the first error equals want (NULL: no error). */
static struct job_spec *
load_expect(const char *path, const char *want, struct diag *warnings)
{
	struct diag	 errors = { 0 };
	struct diag	 local = { 0 };
	struct job_spec	*spec;

	spec = jobfile_load(path, &errors, warnings ? warnings : &local);
	if (want == NULL) {
		if (errors.count)
			fail_msg("unexpected error: %s", errors.items[0]);
		assert_non_null(spec);
	} else {
		assert_null(spec);
		assert_true(errors.count >= 1);
		if (strcmp(errors.items[0], want) != 0)
			fail_msg("error '%s', want '%s'", errors.items[0], want);
	}
	diag_clear(&errors);
	diag_clear(&local);
	return spec;
}

static void
test_job_good(void **state)
{
	struct diag	 warnings = { 0 };
	struct job_spec	*spec;

	(void)state;
	spec = load_expect(job_xml("good.plist", "<key>Profile</key>"
	    "<string>apple7</string><key>EnvironmentVariables</key><dict>"
	    "<key>HOME</key><string>/tmp</string></dict>"
	    "<key>Colour</key><string>blue</string>"), NULL, &warnings);
	assert_int_equal(spec->argc, 3);
	assert_string_equal(spec->argv[0], PROGRAM);
	assert_string_equal(spec->profile, "apple7");
	assert_true(spec->unlocked);
	assert_true(spec->run_at_load);
	assert_false(spec->inherit_shim);
	/* An unknown key is a warning, not an error. */
	assert_int_equal(warnings.count, 1);
	assert_string_equal(warnings.items[0],
	    "good.plist:Colour: unknown key, ignored");
	jobfile_free(spec);
	diag_clear(&warnings);
}

static void
test_job_wrong_types(void **state)
{
	static const struct { const char *xml, *error; } cases[] = {
		{ "<key>Profile</key><integer>9</integer>",
		    "t.plist:Profile: expected a string, found an integer" },
		{ "<key>Unlocked</key><string>yes</string>",
		    "t.plist:Unlocked: expected a boolean, found a string" },
		{ "<key>EnvironmentVariables</key><array/>",
		    "t.plist:EnvironmentVariables: expected a dictionary, found "
		    "an array" },
		{ "<key>EnvironmentVariables</key><dict><key>N</key><integer>1"
		    "</integer></dict>", "t.plist:EnvironmentVariables.N: "
		    "expected a string, found an integer" },
		{ "<key>WorkingDirectory</key><true/>",
		    "t.plist:WorkingDirectory: expected a string, found a "
		    "boolean" },
		{ "<key>RunAtLoad</key><string>no</string>",
		    "t.plist:RunAtLoad: expected a boolean, found a string" },
		{ "<key>KeepAlive</key><string>always</string>",
		    "t.plist:KeepAlive: expected a boolean or a dictionary, "
		    "found a string" },
		{ "<key>StandardOutPath</key><integer>1</integer>",
		    "t.plist:StandardOutPath: expected a string, found an "
		    "integer" },
		{ "<key>StandardErrorPath</key><array/>",
		    "t.plist:StandardErrorPath: expected a string, found an "
		    "array" },
		{ "<key>InheritShim</key><integer>1</integer>",
		    "t.plist:InheritShim: expected a boolean, found an "
		    "integer" },
		{ "<key>HealthCheck</key><string>curl</string>",
		    "t.plist:HealthCheck: expected a dictionary, found a "
		    "string" },
		{ "<key>HealthCheck</key><dict><key>TimeoutSeconds</key>"
		    "<string>5</string></dict>", "t.plist:HealthCheck."
		    "TimeoutSeconds: expected an integer, found a string" },
		{ "<key>FailureSignatures</key><dict/>",
		    "t.plist:FailureSignatures: expected an array of strings, "
		    "found a dictionary" },
		{ "<key>FailureSignatures</key><array><string>(</string>"
		    "</array>", "t.plist:FailureSignatures[0]: \"(\" is not "
		    "an extended regular expression" },
		{ "<key>CrashLoop</key><array/>",
		    "t.plist:CrashLoop: expected a dictionary, found an "
		    "array" },
		{ "<key>CrashLoop</key><dict><key>MaxExits</key><true/></dict>",
		    "t.plist:CrashLoop.MaxExits: expected an integer, found a "
		    "boolean" },
		{ "<key>WorkingDirectory</key><string>srv</string>",
		    "t.plist:WorkingDirectory: \"srv\" is not an absolute "
		    "path" },
		/* The daemon keeps the last 16 exits: 17 could never trip. */
		{ "<key>CrashLoop</key><dict><key>MaxExits</key><integer>17"
		    "</integer></dict>", "t.plist:CrashLoop.MaxExits: 17 is "
		    "out of range (1 to 16)" },
		{ "<key>CrashLoop</key><dict><key>MaxExits</key><integer>0"
		    "</integer></dict>", "t.plist:CrashLoop.MaxExits: 0 is "
		    "out of range (1 to 16)" },
		{ "<key>CrashLoop</key><dict><key>WindowSeconds</key><integer>0"
		    "</integer></dict>", "t.plist:CrashLoop.WindowSeconds: 0 is "
		    "out of range (1 to 86400)" },
		{ "<key>HealthCheck</key><dict><key>TimeoutSeconds</key>"
		    "<integer>4294967296</integer></dict>", "t.plist:"
		    "HealthCheck.TimeoutSeconds: 4294967296 is out of range "
		    "(1 to 3600)" },
		/* Matching stays cheap whatever a job says. */
		{ "<key>FailureSignatures</key><array><string>(.*)(.*)(.*)"
		    "\\3\\2\\1x</string></array>", "t.plist:FailureSignatures"
		    "[0]: refused: a back-reference (\\1 to \\9): they make "
		    "matching take exponential time" },
		{ "<key>FailureSignatures</key><array><string>((a{1,100}){1,100})"
		    "{1,100}</string></array>", "t.plist:FailureSignatures[0]: "
		    "refused: repetitions expand it past 2000 states" },
		{ "<key>FailureSignatures</key><array><string>a{1,1000}</string>"
		    "</array>", "t.plist:FailureSignatures[0]: refused: a "
		    "repetition count over 255" },
		{ "<key>FailureSignatures</key><array><string>(((((((((((((((((a"
		    ")))))))))))))))))</string></array>", "t.plist:"
		    "FailureSignatures[0]: refused: groups nested deeper than 16" },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		print_message("%s\n", cases[i].error);
		load_expect(job_xml("t.plist", cases[i].xml), cases[i].error,
		    NULL);
	}
}

static void
test_job_program(void **state)
{
	char	script[256];

	(void)state;
	load_expect(write_file("none.plist", "<plist version=\"1.0\"><dict>"
	    "<key>Profile</key><string>apple9</string></dict></plist>"),
	    "none.plist:ProgramArguments: required", NULL);
	load_expect(write_file("str.plist", "<plist version=\"1.0\"><dict>"
	    "<key>ProgramArguments</key><string>/bin/x</string></dict>"
	    "</plist>"), "str.plist:ProgramArguments: expected an array of "
	    "strings, found a string", NULL);
	load_expect(write_file("rel.plist", "<plist version=\"1.0\"><dict>"
	    "<key>ProgramArguments</key><array><string>llama-server</string>"
	    "</array></dict></plist>"), "rel.plist:ProgramArguments[0]: "
	    "\"llama-server\" is not an absolute path", NULL);
	load_expect(write_file("sh.plist", "<plist version=\"1.0\"><dict>"
	    "<key>ProgramArguments</key><array><string>/bin/sh</string>"
	    "<string>-c</string><string>llama-server</string></array></dict>"
	    "</plist>"), "sh.plist:ProgramArguments[0]: /bin/sh is a shell or "
	    "env wrapper: the shim would load into it, not the workload; name "
	    "the real binary", NULL);
	snprintf(script, sizeof script, "%s", write_file("run.sh",
	    "#!/bin/sh\nexec llama-server\n"));
	chmod(script, 0755);
	{
		char body[1024], want[1024];

		snprintf(body, sizeof body, "<plist version=\"1.0\"><dict>"
		    "<key>ProgramArguments</key><array><string>%s</string>"
		    "</array></dict></plist>", script);
		/* A script is judged by its interpreter: a shell here. */
		snprintf(want, sizeof want, "script.plist:ProgramArguments[0]: "
		    "/bin/sh is a shell or env wrapper: the shim would load "
		    "into it, not the workload; name the real binary");
		load_expect(write_file("script.plist", body), want, NULL);
		/* Python is the workload (MLX in-process): a warning for
		 * its SIP-protected path, no error; its scripts likewise. */
		jobfile_free(load_expect(write_file("py.plist", "<plist "
		    "version=\"1.0\"><dict><key>ProgramArguments</key><array>"
		    "<string>/usr/bin/python3</string><string>-m</string>"
		    "<string>mlx_lm.server</string></array></dict></plist>"),
		    NULL, NULL));
		/* A stock job may run anything. */
		snprintf(body, sizeof body, "<plist version=\"1.0\"><dict>"
		    "<key>ProgramArguments</key><array><string>%s</string>"
		    "</array><key>Unlocked</key><false/></dict></plist>",
		    script);
		jobfile_free(load_expect(write_file("stock.plist", body), NULL,
		    NULL));
	}
}

/* Patterns within the budget compile and match. */
static void
test_signature_budget(void **state)
{
	static const char *const fine[] = { "a{1,255}", "(ab|cd){2,10}x",
	    "[[:alpha:]]{0,200}", "x\\{1,5\\}", "ggml.*error: (.*)$",
	    "([a-z]{1,40}){1,40}" };
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof fine / sizeof fine[0]; i++)
		if (scan_refused(fine[i]) != NULL)
			fail_msg("%s refused: %s", fine[i], scan_refused(fine[i]));
	assert_non_null(scan_refused("([a-z]{1,50}){1,50}"));
	/* Found by fuzz_signature: glibc doubles the tree for each '+'
	 * (x+ is x x*), so stacked pluses took regcomp past 2 GiB. */
	assert_non_null(scan_refused(">>>>++++++++++++++++++++++++++++++++"
	    "++>>>>[[."));
	assert_null(scan_refused("srv +error: +.+$"));
}

/* Programs that cannot be a workload, without blocking on any of them. */
static void
test_job_program_special(void **state)
{
	char	fifo[256], body[1024], want[1024];

	(void)state;
	snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0755), 0);
	snprintf(body, sizeof body, "<plist version=\"1.0\"><dict>"
	    "<key>ProgramArguments</key><array><string>%s</string></array>"
	    "</dict></plist>", fifo);
	snprintf(want, sizeof want, "f.plist:ProgramArguments[0]: %s is not a "
	    "regular file", fifo);
	load_expect(write_file("f.plist", body), want, NULL);
	load_expect(write_file("z.plist", "<plist version=\"1.0\"><dict><key>"
	    "ProgramArguments</key><array><string>/dev/zero</string></array>"
	    "</dict></plist>"), "z.plist:ProgramArguments[0]: /dev/zero is "
	    "not a regular file", NULL);
	snprintf(fifo, sizeof fifo, "%s", write_file("noexec", "x"));
	snprintf(body, sizeof body, "<plist version=\"1.0\"><dict><key>"
	    "ProgramArguments</key><array><string>%s</string></array>"
	    "</dict></plist>", fifo);
	snprintf(want, sizeof want, "n.plist:ProgramArguments[0]: %s is not "
	    "executable", fifo);
	load_expect(write_file("n.plist", body), want, NULL);
}

/* Loader variables could swap the shim: they are ignored, with a warning. */
static void
test_job_loader_env(void **state)
{
	struct diag	 warnings = { 0 };
	struct job_spec	*spec;

	(void)state;
	spec = load_expect(job_xml("e.plist", "<key>EnvironmentVariables"
	    "</key><dict><key>DYLD_LIBRARY_PATH</key><string>/tmp</string>"
	    "<key>DYLD_IMAGE_SUFFIX</key><string>_x</string><key>LD_AUDIT"
	    "</key><string>/tmp/a.so</string><key>HOME</key><string>/h"
	    "</string></dict>"), NULL, &warnings);
	assert_int_equal(warnings.count, 3);
	assert_string_equal(warnings.items[0], "e.plist:EnvironmentVariables."
	    "DYLD_LIBRARY_PATH: loader and shim variables are metalcapd's; "
	    "ignored");
	assert_int_equal(plist_dict_get_size(spec->env), 1);
	assert_non_null(plist_dict_get_item(spec->env, "HOME"));
	jobfile_free(spec);
	diag_clear(&warnings);
}

static void
test_job_bad_files(void **state)
{
	char		 path[256], target[256];
	plist_t		 root;
	char		*bin = NULL;
	uint32_t	 len = 0;
	FILE		*f;
	struct job_spec	*spec;

	(void)state;
	load_expect(write_file("empty.plist", ""), "empty.plist: is empty",
	    NULL);
	load_expect(write_file("junk.plist", "this is not a plist"),
	    "junk.plist: is not a property list (XML or binary)", NULL);
	load_expect(write_file("array.plist", "<plist version=\"1.0\"><array/>"
	    "</plist>"), "array.plist: expected a dictionary at the top, found "
	    "an array", NULL);
	snprintf(target, sizeof target, "%s", job_xml("real.plist", ""));
	snprintf(path, sizeof path, "%s/link.plist", tmpdir);
	assert_int_equal(symlink(target, path), 0);
	load_expect(path, "link.plist: is a symbolic link (must be a regular "
	    "file)", NULL);
	snprintf(path, sizeof path, "%s/dir.plist", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	load_expect(path, "dir.plist: is a directory, not a regular file",
	    NULL);
	/* A binary plist is as good as XML. */
	assert_int_equal(mc_plist_read_file(target, &root, path, sizeof path),
	    0);
	plist_to_bin(root, &bin, &len);
	snprintf(path, sizeof path, "%s/bin.plist", tmpdir);
	f = fopen(path, "wb");
	fwrite(bin, 1, len, f);
	fclose(f);
	plist_to_bin_free(bin);
	plist_free(root);
	spec = load_expect(path, NULL, NULL);
	assert_int_equal(spec->argc, 3);
	jobfile_free(spec);
	assert_true(jobfile_name_ok("llama-3.1_8b"));
	assert_false(jobfile_name_ok("bad name"));
	assert_false(jobfile_name_ok(".."));
	assert_false(jobfile_name_ok(""));
	assert_false(jobfile_name_ok("a/b"));
}

/* The string value at dict.key of an agent. */
static char *
agent_env(plist_t agent, const char *key)
{
	plist_t	env = plist_dict_get_item(agent, "EnvironmentVariables");

	return env ? mc_plist_string(env, key) : NULL;
}

static void
test_render(void **state)
{
	struct mcd_paths	 paths = { 0 };
	struct profile		 apple9 = { .name = "apple9", .family_max = 1009,
	    .threadgroup_memory = 65536 };
	struct job_spec		*spec;
	struct render_input	 in = { "llama", NULL, &apple9, &paths };
	plist_t			 tmpl, agent, env, node;
	plist_dict_iter		 it = NULL;
	char			*s, *key, why[128];

	(void)state;
	snprintf(paths.shim, sizeof paths.shim, "/opt/mc/lib/libmetalcap.dylib");
	snprintf(paths.logs, sizeof paths.logs, "/var/log/mc");
	snprintf(paths.state, sizeof paths.state, "/var/mc/state");
	assert_int_equal(mc_plist_read_file(write_file("tmpl.plist",
	    "<plist version=\"1.0\"><dict><key>Nice</key><integer>5</integer>"
	    "<key>ProcessType</key><string>Standard</string>"
	    "<key>EnvironmentVariables</key><dict><key>PATH</key>"
	    "<string>/usr/bin</string></dict></dict></plist>"), &tmpl, why,
	    sizeof why), 0);
	spec = load_expect(job_xml("llama.plist", "<key>EnvironmentVariables"
	    "</key><dict><key>HOME</key><string>/Users/u</string><key>"
	    "DYLD_INSERT_LIBRARIES</key><string>/evil.dylib</string></dict>"),
	    NULL, NULL);
	in.spec = spec;
	agent = render_agent(tmpl, &in);
	s = mc_plist_string(agent, "Label");
	assert_string_equal(s, "org.metalcap.job.llama");
	free(s);
	/* Template keys are kept. */
	assert_non_null(plist_dict_get_item(agent, "Nice"));
	s = mc_plist_string(agent, "ProcessType");
	assert_string_equal(s, "Standard");
	free(s);
	s = mc_plist_string(agent, "StandardErrorPath");
	assert_string_equal(s, "/var/log/mc/llama.err.log");
	free(s);
	assert_true(mc_plist_bool(agent, "KeepAlive", false));
	s = agent_env(agent, "DYLD_INSERT_LIBRARIES");
	assert_string_equal(s, "/opt/mc/lib/libmetalcap.dylib");
	free(s);
	s = agent_env(agent, "METALCAP_APPLE_FAMILY_MAX");
	assert_string_equal(s, "1009");
	free(s);
	s = agent_env(agent, "METALCAP_INHERIT");
	assert_string_equal(s, "0");
	free(s);
	s = agent_env(agent, "PATH");
	assert_string_equal(s, "/usr/bin");
	free(s);
	/* Every environment value is a string. */
	env = plist_dict_get_item(agent, "EnvironmentVariables");
	plist_dict_new_iter(env, &it);
	for (;;) {
		key = NULL;
		plist_dict_next_item(env, it, &key, &node);
		if (key == NULL)
			break;
		assert_int_equal(plist_get_node_type(node), PLIST_STRING);
		free(key);
	}
	free(it);
	plist_free(agent);

	/* Stock: no trace of the shim; ProcessType defaults to Interactive. */
	plist_dict_remove_item(tmpl, "ProcessType");
	in.profile = NULL;
	agent = render_agent(tmpl, &in);
	assert_null(agent_env(agent, "DYLD_INSERT_LIBRARIES"));
	assert_null(agent_env(agent, "METALCAP_APPLE_FAMILY_MAX"));
	s = mc_plist_string(agent, "ProcessType");
	assert_string_equal(s, "Interactive");
	free(s);
	plist_free(agent);
	plist_free(tmpl);
	jobfile_free(spec);
}

static void
test_protocol(void **state)
{
	struct mc_rpc_decoder	 dec;
	struct mc_rpc_message	 m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	const char		*why = NULL;
	char			 buf[64], msg[128];
	size_t			 i;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mc_rpc_pack_request(&pk, 7, MC_M_ENABLE, 2);
	mc_rpc_pack_str(&pk, "llama");
	msgpack_pack_map(&pk, 1);
	mc_rpc_pack_str(&pk, "profile");
	mc_rpc_pack_str(&pk, "apple7");
	mc_rpc_pack_response_error(&pk, 8, MC_E_NOJOB, "no job named x");
	mc_rpc_pack_notify(&pk, MC_N_EVENT, 0);
	assert_int_equal(mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE), 0);
	/* One byte at a time: the decoder is incremental. */
	for (i = 0; i < sb.size; i++)
		assert_int_equal(mc_rpc_feed(&dec, sb.data + i, 1), 0);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_REQUEST);
	assert_int_equal(m.msgid, 7);
	assert_string_equal(m.method, "enable");
	assert_int_equal(m.params.via.array.size, 2);
	assert_true(mc_rpc_str(&m.params.via.array.ptr[0], buf, sizeof buf));
	assert_string_equal(buf, "llama");
	assert_true(mc_rpc_str(mc_rpc_map_get(&m.params.via.array.ptr[1],
	    "profile"), buf, sizeof buf));
	assert_string_equal(buf, "apple7");
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_RESPONSE);
	/* [type, "CODE: message"], the shape Neovim and pynvim read. */
	assert_int_equal(m.error.type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(m.error.via.array.size, 2);
	assert_int_equal(m.error.via.array.ptr[0].via.u64, MC_ERR_VALIDATION);
	assert_true(mc_rpc_str(&m.error.via.array.ptr[1], msg, sizeof msg));
	assert_string_equal(msg, "ENOJOB: no job named x");
	mc_rpc_error_parse(&m.error, buf, sizeof buf, msg, sizeof msg);
	assert_string_equal(buf, "ENOJOB");
	assert_string_equal(msg, "no job named x");
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.type, MC_MSG_NOTIFY);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_MORE);
	mc_rpc_decoder_free(&dec);
	msgpack_sbuffer_destroy(&sb);
}

/*
 * Bytes that are not msgpack cost the connection (MALFORMED); a request
 * whose msgid is known is answered (BADREQUEST); other msgpack is ignored.
 */
static void
test_protocol_malformed(void **state)
{
	static const char	badreq[] = "a request is [0, msgid, method, "
	    "params]: 4 elements";
	static const struct { const char *bytes; size_t len; int st;
	    const char *why; } cases[] = {
		{ "\x01", 1, MC_RPC_IGNORED, "not a msgpack-RPC message: "
		    "[type, ...] with type 0, 1 or 2" },
		{ "\x94\x05\x01\xa1m\x90", 6, MC_RPC_IGNORED, "not a "
		    "msgpack-RPC message: [type, ...] with type 0, 1 or 2" },
		{ "\x94\x00\xff\xa1m\x90", 6, MC_RPC_IGNORED, "a request's "
		    "msgid must be an integer from 0 to 2^32-1" },
		{ "\x94\x00\x01\x01\x90", 5, MC_RPC_BADREQUEST, "the method "
		    "must be a string (str or bin) of at most 64 bytes" },
		{ "\x94\x00\x01\xa1m\x01", 6, MC_RPC_BADREQUEST,
		    "params must be an array" },
		{ "\x94\x00\x01\xa1m\xc0", 6, MC_RPC_BADREQUEST,
		    "params must be an array" },
		{ "\x93\x00\x01\xa1m", 5, MC_RPC_BADREQUEST, badreq },
		{ "\x95\x00\x01\xa1m\x90\x90", 7, MC_RPC_BADREQUEST, badreq },
		/* A method with a NUL in it is no name of ours. */
		{ "\x94\x00\x01\xa2m\x00\x90", 7, MC_RPC_BADREQUEST, "the "
		    "method must be a string (str or bin) of at most 64 bytes" },
		/* Responses and notifications of any other shape: ignored. */
		{ "\x93\x01\x01\xc0", 4, MC_RPC_IGNORED,
		    "a response is [1, msgid, error, result]" },
		{ "\x92\x02\xa1m", 4, MC_RPC_IGNORED,
		    "a notification is [2, method, params]" },
		{ "\xc1", 1, MC_RPC_MALFORMED, "not msgpack" },
		/* Refused from the headers alone, before msgpack-c allocates
		 * (fuzz_rpc found a 4-byte array header costing 40 GB). */
		{ "\x94\x00\x01\xa1m\xdd\x7f\xff\xff\xff", 10,
		    MC_RPC_MALFORMED, "a container larger than the size limit" },
		{ "\xdb\x7f\xff\xff\xff", 5, MC_RPC_MALFORMED,
		    "message over the size limit" },
		{ "\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91"
		    "\x91\x91\x91\x91\x91", 17, MC_RPC_MALFORMED,
		    "msgpack nested too deep" },
	};
	struct mc_rpc_decoder	dec;
	struct mc_rpc_message	m;
	const char		*why;
	char			 big[100];
	size_t			 i;
	int			 st;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
		why = NULL;
		/* Refused as the bytes arrive, or as a whole message. */
		if (mc_rpc_feed(&dec, cases[i].bytes, cases[i].len) == -1)
			why = dec.error;
		else if ((st = mc_rpc_next(&dec, &m, &why)) != cases[i].st)
			fail_msg("case %zu: status %d, want %d", i, st,
			    cases[i].st);
		if (why == NULL || strcmp(why, cases[i].why) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, why ? why :
			    "(accepted)", cases[i].why);
		mc_rpc_decoder_free(&dec);
	}
	/*
	 * The limit to the byte, whatever sits at the end: a bin8 parameter
	 * and a bare str8 of exactly 64 bytes pass at limit 64, one more does
	 * not.  (A parameter inside a container used to be charged a byte
	 * for its container as well: the limit was one byte smaller there.)
	 */
	{
		static const struct { const char *head; size_t hlen; } shapes[] = {
			{ "\x94\x00\x01\xa5hello\x91\xc4", 11 },	/* bin8 */
			{ "\x94\x00\x01\xa5hello\x91\xd9", 11 },	/* str8 */
			{ "\xd9", 1 },				/* bare */
		};
		size_t	k, extra, len;

		for (k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
			for (extra = 0; extra < 2; extra++) {
				len = 64 + extra;
				memcpy(big, shapes[k].head, shapes[k].hlen);
				big[shapes[k].hlen] = (char)(len -
				    shapes[k].hlen - 1);
				memset(big + shapes[k].hlen + 1, 'x', len -
				    shapes[k].hlen - 1);
				mc_rpc_decoder_init(&dec, 64);
				if ((mc_rpc_feed(&dec, big, len) == 0) != !extra)
					fail_msg("shape %zu, %zu bytes: %s", k,
					    len, extra ? "accepted" :
					    dec.error);
				mc_rpc_decoder_free(&dec);
			}
	}
	/* A method name as bin, as pynvim and older packers send it. */
	mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
	mc_rpc_feed(&dec, "\x94\x00\x09\xc4\x05hello\x91\xc4\x01x", 14);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_int_equal(m.msgid, 9);
	assert_string_equal(m.method, "hello");
	assert_true(mc_rpc_str(&m.params.via.array.ptr[0], big, sizeof big));
	assert_string_equal(big, "x");
	mc_rpc_decoder_free(&dec);
	/* Found by fuzz_rpc: an empty method name (msgpack gives no storage). */
	mc_rpc_decoder_init(&dec, MC_MAX_MESSAGE);
	mc_rpc_feed(&dec, "\x94\x00\x03\xa0\x90", 5);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_OK);
	assert_string_equal(m.method, "");
	mc_rpc_decoder_free(&dec);
	/* A message larger than the limit is refused at its header. */
	mc_rpc_decoder_init(&dec, 64);
	memset(big, 0, sizeof big);
	big[0] = (char)0xda;	/* str 16 of 0x00ff bytes */
	big[1] = 0x00;
	big[2] = (char)0xff;
	assert_int_equal(mc_rpc_feed(&dec, big, 3), -1);
	assert_string_equal(dec.error, "message over the size limit");
	mc_rpc_decoder_free(&dec);
	/* One within it is buffered until whole. */
	mc_rpc_decoder_init(&dec, 64);
	big[2] = 60;
	assert_int_equal(mc_rpc_feed(&dec, big, 30), 0);
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_MORE);
	assert_int_equal(mc_rpc_feed(&dec, big, 33), 0);
	/* Whole, and valid msgpack, but no message: nothing to answer. */
	assert_int_equal(mc_rpc_next(&dec, &m, &why), MC_RPC_IGNORED);
	mc_rpc_decoder_free(&dec);
}

static void
test_state_round_trip(void **state)
{
	struct state	 st, back;
	struct override	*o;
	char		 note[512], why[256], cmd[512];

	(void)state;
	assert_int_equal(state_load(&st, tmpdir, note, sizeof note), 0);
	assert_int_equal(st.count, 0);
	o = state_get(&st, "llama", true);
	o->unlocked = 0;
	snprintf(o->profile, sizeof o->profile, "apple7");
	state_get(&st, "mlx", true)->stopped = true;
	assert_int_equal(state_save(&st, why, sizeof why), 0);
	assert_int_equal(state_load(&back, tmpdir, note, sizeof note), 0);
	assert_int_equal(back.count, 2);
	o = state_get(&back, "llama", false);
	assert_non_null(o);
	assert_int_equal(o->unlocked, 0);
	assert_string_equal(o->profile, "apple7");
	assert_false(o->stopped);
	o = state_get(&back, "mlx", false);
	assert_true(o->stopped);
	assert_int_equal(o->unlocked, -1);
	state_free(&st);
	state_free(&back);

	/* A corrupt file is moved aside with a note, never fatal. */
	write_file("overrides.plist", "\x00garbage{{{");
	assert_int_equal(state_load(&st, tmpdir, note, sizeof note), -1);
	assert_non_null(strstr(note, "moved aside to"));
	assert_int_equal(st.count, 0);
	snprintf(cmd, sizeof cmd, "ls %s/overrides.plist.corrupt-* >/dev/null",
	    tmpdir);
	assert_int_equal(system(cmd), 0);
	assert_int_not_equal(access(st.path, F_OK), 0);
	state_free(&st);
}

/* Each real log's lines through the scanner: what fires, and how often. */
static int
scan_file(const struct scan *sc, const char *name, const char **first)
{
	char	 path[512], line[8192];
	FILE	*f;
	int	 hits = 0;

	snprintf(path, sizeof path, "%s/%s", MC_TEST_FIXTURES, name);
	f = fopen(path, "r");
	assert_non_null(f);
	*first = NULL;
	while (fgets(line, sizeof line, f) != NULL) {
		const char *what = scan_line(sc, line);

		if (what != NULL && hits++ == 0)
			*first = what;
	}
	fclose(f);
	return hits;
}

static void
test_scan_real_logs(void **state)
{
	struct scan	*sc = scan_new(NULL);
	const char	*what;
	plist_t		 extra;

	(void)state;
	/* No false alarm on the healthy runs. */
	assert_int_equal(scan_file(sc, "llama-stock-guest.stderr", &what), 0);
	assert_int_equal(scan_file(sc, "llama-unlocked-guest.stderr", &what), 0);
	assert_int_equal(scan_file(sc, "llama-bare-metal-host.stderr", &what),
	    0);
	/* The MLX failure is caught; the over-broad profile recognised. */
	assert_int_equal(scan_file(sc, "mlx-overbroad-profile-failure.stderr",
	    &what), 2);
	assert_string_equal(what, "residency set failure");
	assert_true(scan_file(sc, "llama-overbroad-profile.stderr", &what) > 0);
	assert_string_equal(what, "over-broad profile");
	/* ggml's lazy pipeline failure, and capability lines that are not. */
	assert_string_equal(scan_line(sc, "ggml_metal_library_compile_pipeline: "
	    "failed to compile pipeline: base = 'kernel_mul_mm_f16_f32', name "
	    "= 'kernel_mul_mm_f16_f32'"), "pipeline failure");
	assert_null(scan_line(sc, "ggml_metal_device_init: simdgroup matrix "
	    "mul. = false"));
	assert_null(scan_line(sc, "ggml_metal_init: skipping kernel_mul_mm "
	    "(not supported)"));
	scan_free(sc);
	/* A job's own signatures add to the built-ins. */
	extra = plist_new_array();
	plist_array_append_item(extra, plist_new_string("^FATAL: gpu [0-9]+"));
	sc = scan_new(extra);
	assert_string_equal(scan_line(sc, "FATAL: gpu 0 lost"),
	    "job failure signature");
	assert_null(scan_line(sc, "note: FATAL: gpu 0 lost"));
	scan_free(sc);
	plist_free(extra);
}

struct tail_lines {
	char	text[8192];
	int	count;
};

static void
tail_collect(void *arg, const char *line)
{
	struct tail_lines	*l = arg;
	size_t			 n = strlen(l->text);

	snprintf(l->text + n, sizeof l->text - n, "%.40s|", line);
	l->count++;
}

static void
append(const char *path, const char *text)
{
	FILE	*f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_tail(void **state)
{
	struct tail		*t = calloc(1, sizeof *t);
	struct tail_lines	 l = { "", 0 };
	char			 path[256], moved[256], *big;

	(void)state;
	snprintf(path, sizeof path, "%s/job.err.log", tmpdir);
	snprintf(moved, sizeof moved, "%s/job.err.log.1", tmpdir);
	append(path, "old line before we started\n");
	tail_start(t, path);
	tail_read(t, tail_collect, &l);
	assert_int_equal(l.count, 0);		/* from the end */
	append(path, "one\ntw");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|");	/* a partial line waits */
	append(path, "o\n");
	tail_read(t, tail_collect, &l);
	tail_read(t, tail_collect, &l);		/* nothing twice */
	assert_string_equal(l.text, "one|two|");
	/* Truncated: read again from the start. */
	truncate(path, 0);
	append(path, "three\n");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|two|three|");
	/* Rotated: the old file's rest first, then the new file. */
	append(path, "four\n");
	assert_int_equal(rename(path, moved), 0);
	append(moved, "five\n");
	append(path, "six\n");
	tail_read(t, tail_collect, &l);
	assert_string_equal(l.text, "one|two|three|four|five|six|");
	/* A huge line is cut, not buffered whole. */
	big = malloc(TAIL_LINE_MAX * 4 + 2);
	memset(big, 'x', TAIL_LINE_MAX * 4);
	big[TAIL_LINE_MAX * 4] = '\n';
	big[TAIL_LINE_MAX * 4 + 1] = '\0';
	append(path, big);
	append(path, "seven\n");
	tail_read(t, tail_collect, &l);
	assert_int_equal(l.count, 8);
	assert_non_null(strstr(l.text, "six|xxxx"));
	assert_non_null(strstr(l.text, "|seven|"));
	/* A flood is read a budget at a time, nothing lost. */
	l.count = 0;
	l.text[0] = '\0';
	memset(big, 'y', 99);
	big[99] = '\n';
	big[100] = '\0';
	{
		FILE	*f = fopen(path, "a");
		int	 i, turns = 0;

		for (i = 0; i < 10000; i++)	/* 1 MB: four budgets */
			fputs(big, f);
		fclose(f);
		while (tail_read(t, tail_collect, &l))
			turns++;
		assert_int_equal(turns, 1000000 / TAIL_BUDGET);
		assert_int_equal(l.count, 10000);
	}
	free(big);
	tail_stop(t);
	free(t);
}

/*
 * Found by fuzz_jobfile and fuzz_profile: a binary plist whose UTF-16 key
 * holds a NUL made libplist assert (abort) when the key was read.  Now the
 * file is refused, naming why, and nothing else is touched.
 */
static void
test_plist_nul_refused(void **state)
{
	char		 path[512], why[256];
	plist_t		 root;
	struct diag	 errors = { 0 }, warnings = { 0 };
	const char	*files[] = { "jobfile/utf16-nul-in-key",
	    "profile/utf16-nul-in-key" };
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/fuzz/regressions/%s",
		    MC_TEST_SOURCE, files[i]);
		assert_int_equal(mc_plist_read_file(path, &root, why,
		    sizeof why), -1);
		assert_string_equal(why, "has a string or key with a NUL "
		    "character in it");
		assert_null(root);
	}
	assert_null(jobfile_load(path, &errors, &warnings));
	assert_int_equal(errors.count, 1);
	assert_non_null(strstr(errors.items[0], "NUL character"));
	diag_clear(&errors);
	diag_clear(&warnings);
}

/*
 * The macOS socket folder: beside the configuration, not in TMPDIR, unless
 * the path would pass the 104 bytes of macOS's sun_path.
 */
static void
test_run_dir(void **state)
{
	char	out[PATH_MAX], want[64], config[256];

	(void)state;
	paths_run_dir("/Users/ml/Library/Application Support/metalcap", 104,
	    out, sizeof out);
	assert_string_equal(out, "/Users/ml/Library/Application Support/"
	    "metalcap/run");
	snprintf(config, sizeof config, "/Users/%s/Library/Application "
	    "Support/metalcap", "a-very-long-account-name-for-a-home-directory");
	paths_run_dir(config, 104, out, sizeof out);
	snprintf(want, sizeof want, "/tmp/metalcap-%ld", (long)getuid());
	assert_string_equal(out, want);
}

/* The last line tail passed, whole. */
static void
tail_keep(void *arg, const char *line)
{
	snprintf(arg, TAIL_LINE_MAX + 2, "%s", line);
}

/*
 * A log line of exactly TAIL_LINE_MAX bytes is passed whole; one byte
 * more and it is cut to that length (a signature at its very end is then
 * lost, as documented).
 */
static void
test_tail_line_edge(void **state)
{
	struct tail	*t = calloc(1, sizeof *t);
	char		 path[256], *line = malloc(TAIL_LINE_MAX + 3);
	char		*seen = calloc(1, TAIL_LINE_MAX + 2);
	int		 extra;

	(void)state;
	snprintf(path, sizeof path, "%s/edge.err.log", tmpdir);
	append(path, "");
	tail_start(t, path);
	for (extra = 0; extra < 2; extra++) {
		memset(line, 'x', TAIL_LINE_MAX + (size_t)extra);
		memcpy(line + TAIL_LINE_MAX + extra - 2, "ZZ", 2);
		strcpy(line + TAIL_LINE_MAX + extra, "\n");
		append(path, line);
		tail_read(t, tail_keep, seen);
		assert_int_equal(strlen(seen), TAIL_LINE_MAX);
		assert_int_equal(strcmp(seen + TAIL_LINE_MAX - 2, "ZZ") == 0,
		    extra == 0);
	}
	tail_stop(t);
	free(t);
	free(line);
	free(seen);
}

/*
 * A property-list file of exactly MC_PLIST_MAX_FILE bytes is read; one
 * byte more is refused, naming the limit.
 */
static void
test_plist_size_edge(void **state)
{
	static const char	head[] = "<plist version=\"1.0\"><string>";
	static const char	tail[] = "</string></plist>";
	char			path[256], why[256], *body;
	size_t			len, pad;
	plist_t			root;
	FILE			*f;
	int			extra;

	(void)state;
	snprintf(path, sizeof path, "%s/big.plist", tmpdir);
	body = malloc(MC_PLIST_MAX_FILE + 2);
	for (extra = 0; extra < 2; extra++) {
		len = MC_PLIST_MAX_FILE + (size_t)extra;
		pad = len - strlen(head) - strlen(tail);
		memcpy(body, head, strlen(head));
		memset(body + strlen(head), 'a', pad);
		memcpy(body + strlen(head) + pad, tail, strlen(tail));
		assert_non_null(f = fopen(path, "w"));
		assert_int_equal(fwrite(body, 1, len, f), len);
		fclose(f);
		if (extra == 0) {
			assert_int_equal(mc_plist_read_file(path, &root, why,
			    sizeof why), 0);
			plist_free(root);
		} else {
			assert_int_equal(mc_plist_read_file(path, &root, why,
			    sizeof why), -1);
			assert_string_equal(why, "is larger than 1048576 bytes");
		}
	}
	free(body);
}

/*
 * A binary plist of depth objects: each an array naming the next one fan
 * times, the last true.  It expands to fan^(depth-1) values; the same
 * bytes in Python's plistlib give nested lists (checked by hand).
 */
static char *
bplist_chain(unsigned depth, unsigned fan, size_t *len)
{
	size_t	 cap = 8 + (size_t)depth * (1 + 4 * fan + 4) + 32, n = 8, i;
	char	*b = malloc(cap), *table;
	size_t	*offs = calloc(depth, sizeof *offs);
	unsigned k, f;

	memcpy(b, "bplist00", 8);
	for (k = 0; k < depth; k++) {
		offs[k] = n;
		if (k + 1 == depth) {
			b[n++] = 0x09;
			continue;
		}
		b[n++] = (char)(0xa0 | fan);
		for (f = 0; f < fan; f++)
			for (i = 0; i < 4; i++)
				b[n++] = (char)((k + 1) >> (24 - 8 * i));
	}
	table = b + n;
	for (k = 0; k < depth; k++)
		for (i = 0; i < 4; i++)
			b[n++] = (char)(offs[k] >> (24 - 8 * i));
	memset(b + n, 0, 32);
	b[n + 6] = 4;
	b[n + 7] = 4;
	for (i = 0; i < 8; i++) {
		b[n + 8 + i] = (char)((uint64_t)depth >> (56 - 8 * i));
		b[n + 24 + i] = (char)((uint64_t)(table - b) >> (56 - 8 * i));
	}
	*len = n + 32;
	free(offs);
	return b;
}

static char *
xml_nested(unsigned depth, size_t *len)
{
	const char	*head = "<?xml version=\"1.0\"?><plist version=\"1.0\">";
	char		*b = malloc(strlen(head) + depth * 15 + 16), *p;
	unsigned	 k;

	p = b + sprintf(b, "%s", head);
	for (k = 0; k < depth; k++)
		p += sprintf(p, "<array>");
	for (k = 0; k < depth; k++)
		p += sprintf(p, "</array>");
	p += sprintf(p, "</plist>");
	*len = (size_t)(p - b);
	return b;
}

/*
 * Bounded work per plist: nesting and expanded size are refused from the
 * bytes, before libplist (which recurses and expands shared references
 * without a limit of its own) sees them; plists within the limits parse.
 */
static void
test_plist_bombs(void **state)
{
	static const struct { unsigned depth, fan; const char *why; } bin[] = {
		{ 40000, 1, "refused: nested deeper than 32 levels" },
		{ 33, 1, "refused: nested deeper than 32 levels" },
		{ 25, 2, "refused: more than 262144 values (a shared "
		    "reference counts each time)" },
		{ 32, 1, NULL },	/* the deepest allowed */
		{ 10, 2, NULL },	/* 1023 values, shared */
	};
	char		 why[256], *b;
	size_t		 len, i;
	plist_t		 root;

	(void)state;
	for (i = 0; i < sizeof bin / sizeof bin[0]; i++) {
		b = bplist_chain(bin[i].depth, bin[i].fan, &len);
		if (bin[i].why == NULL) {
			if (mc_plist_read_memory(b, len, &root, why,
			    sizeof why) != 0)
				fail_msg("depth %u fan %u: %s", bin[i].depth,
				    bin[i].fan, why);
			plist_free(root);
		} else {
			assert_int_equal(mc_plist_read_memory(b, len, &root,
			    why, sizeof why), -1);
			assert_string_equal(why, bin[i].why);
			assert_null(root);
		}
		free(b);
	}
	b = xml_nested(30000, &len);
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: nested deeper than 32 levels");
	free(b);
	b = xml_nested(32, &len);
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    0);
	plist_free(root);
	free(b);
	/* Entities are refused whatever libplist would do with them. */
	b = strdup("<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY a "
	    "\"aaaa\">]><plist version=\"1.0\"><string>&a;</string></plist>");
	assert_int_equal(mc_plist_read_memory(b, strlen(b), &root, why,
	    sizeof why), -1);
	assert_string_equal(why, "refused: an XML entity or internal DTD "
	    "subset");
	free(b);
	/* A reference past the objects, and a trailer that lies. */
	b = bplist_chain(3, 1, &len);
	b[9] = 7;	/* object 0 names object 0x07000000+1 */
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: a binary plist reference to no "
	    "object");
	b[len - 32 + 6] = 9;	/* offset size 9 */
	assert_int_equal(mc_plist_read_memory(b, len, &root, why, sizeof why),
	    -1);
	assert_string_equal(why, "refused: a binary plist with a malformed "
	    "trailer");
	free(b);
}

/* The shipped profile files say exactly what the built-ins say. */
static void
test_profile_files_match_builtins(void **state)
{
	static const char *const names[] = { "apple9", "apple7" };
	struct profile_set	 set = { 0 };
	struct profile		 file;
	const struct profile	*builtin;
	char			 path[512], why[256];
	plist_t			 root;
	size_t			 i;

	(void)state;
	profile_load_all(&set, "/nonexistent");
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/profiles/%s.plist",
		    MC_TEST_SOURCE, names[i]);
		if (mc_plist_read_file(path, &root, why, sizeof why) == -1)
			fail_msg("%s", why);
		memset(&file, 0, sizeof file);
		if (profile_parse(root, path, &file) == -1)
			fail_msg("%s", file.error);
		plist_free(root);
		assert_non_null(builtin = profile_find(&set, names[i]));
		assert_int_equal(file.family_max, builtin->family_max);
		assert_int_equal(file.threadgroup_memory,
		    builtin->threadgroup_memory);
		assert_int_equal(file.working_set, builtin->working_set);
		assert_string_equal(file.description, builtin->description);
	}
	profile_free_all(&set);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_job_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_wrong_types, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_program, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_bad_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_render, setup, teardown),
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_protocol_malformed),
		cmocka_unit_test_setup_teardown(test_state_round_trip, setup,
		    teardown),
		cmocka_unit_test(test_scan_real_logs),
		cmocka_unit_test_setup_teardown(test_tail, setup, teardown),
		cmocka_unit_test(test_profile_files_match_builtins),
		cmocka_unit_test(test_plist_nul_refused),
		cmocka_unit_test(test_plist_bombs),
		cmocka_unit_test(test_run_dir),
		cmocka_unit_test_setup_teardown(test_tail_line_edge, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_plist_size_edge, setup,
		    teardown),
		cmocka_unit_test(test_signature_budget),
		cmocka_unit_test_setup_teardown(test_job_program_special, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_loader_env, setup,
		    teardown),
	};

	log_open(NULL, false);
	/* MC_TEST_ONLY=pattern runs the matching tests (make mutate). */
	if (getenv("MC_TEST_ONLY") != NULL)
		cmocka_set_test_filter(getenv("MC_TEST_ONLY"));
	return cmocka_run_group_tests_name("daemon units", tests, NULL, NULL);
}
